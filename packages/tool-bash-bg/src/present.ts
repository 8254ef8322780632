/** Pure UI cards: a terminal for foreground runs, a generic card for background starts. */
import type { GenericCallView, TerminalCallView, ToolResult, ToolResultView } from '@deepseek-ai/dsh-tools'

export interface CallArgs {
  command: string
  description?: string
  run_in_background?: boolean
}

export function presentCall(args: CallArgs): GenericCallView | TerminalCallView {
  if (args.run_in_background === true) {
    return {
      card: 'generic',
      title: args.command,
      kind: 'execute',
      rawInput: args.command,
      ...args.description !== undefined ? { content: [{ type: 'text', text: args.description }] } : {},
    }
  }
  return { card: 'terminal', title: args.command, ...args.description !== undefined ? { description: args.description } : {} }
}

/** The exit facts the tool projects into `meta` for the terminal card. */
interface ExitMeta {
  exit_code: number | null
  signal: string | null
}

function exitMeta(meta: unknown): ExitMeta | undefined {
  if (typeof meta !== 'object' || meta === null || !('exit_code' in meta)) return undefined
  return meta as ExitMeta
}

export function presentResult(args: CallArgs, result: ToolResult): ToolResultView | undefined {
  const block = result.content.length === 1 ? result.content[0] : undefined
  if (block === undefined || block.type !== 'text') return undefined
  const exit = exitMeta(result.meta)
  if (args.run_in_background === true || result.isError || exit === undefined) {
    return { card: 'generic', content: [{ type: 'text', text: `\`\`\`console\n${block.text.replace(/\n+$/, '')}\n\`\`\`` }] }
  }
  return {
    card: 'terminal',
    output: block.text,
    ...exit.exit_code !== null ? { exitCode: exit.exit_code } : {},
    ...exit.signal !== null ? { signal: exit.signal } : {},
  }
}
