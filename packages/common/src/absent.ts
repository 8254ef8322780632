// The blanks-as-absent wrapper: a tool definition whose optional arguments sent as "" or null count as absent.
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'

function dropAbsent(args: unknown, required: ReadonlySet<string>): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args
  const entries = Object.entries(args)
  if (!entries.some(([key, value]) => !required.has(key) && (value === '' || value === null))) return args
  return Object.fromEntries(entries.filter(([key, value]) => required.has(key) || (value !== '' && value !== null)))
}

/**
 * `tool`, each entry point of which sees the optional arguments sent as `""` or `null` dropped (strict function
 * calling sends null for each) before the schema check, so only a present, wrong value is an error.
 */
export function blanksAsAbsent(tool: ToolDefinition, required: readonly string[]): ToolDefinition {
  const keep = new Set(required)
  const drop = (args: unknown): never => dropAbsent(args, keep) as never
  // Bound, so a tool whose entry points use `this` still sees itself.
  const { output } = tool
  const execute = tool.execute.bind(tool)
  const call = tool.presentCall?.bind(tool)
  const result = tool.presentResult?.bind(tool)
  const safe = tool.isConcurrencySafe?.bind(tool)
  return {
    ...tool,
    output: { ...output, render: (args, value) => output.render(drop(args), value) },
    execute: (args, exec) => execute(drop(args), exec),
    ...call ? { presentCall: (args: unknown) => call(drop(args)) } : {},
    ...result ? { presentResult: (args: unknown, value: never) => result(drop(args), value) } : {},
    ...safe ? { isConcurrencySafe: (args: unknown) => safe(drop(args)) } : {},
  }
}
