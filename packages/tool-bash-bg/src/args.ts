/** Models send optional arguments as "" or null: both count as absent. */
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'

function dropEmpty(args: unknown, optional: ReadonlySet<string>): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args
  return Object.fromEntries(Object.entries(args).filter(([key, value]) => !optional.has(key) || (value !== '' && value !== null)))
}

/** `tool`, with its optional arguments dropped when sent as "" or null, before validation. */
export function emptyAsAbsent(tool: ToolDefinition, optional: readonly string[]): ToolDefinition {
  const keys = new Set(optional)
  const { execute, presentCall, presentResult } = tool
  return {
    ...tool,
    execute: (args, exec) => execute(dropEmpty(args, keys) as typeof args, exec),
    ...presentCall === undefined ? {} : { presentCall: (args: unknown) => presentCall(dropEmpty(args, keys) as never) },
    ...presentResult === undefined ? {} : { presentResult: (args: unknown, result: Parameters<typeof presentResult>[1]) => presentResult(dropEmpty(args, keys) as never, result) },
  }
}
