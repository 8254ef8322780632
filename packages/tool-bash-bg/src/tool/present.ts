/** Pure UI cards: a terminal for foreground runs, a generic card for background starts. */
import type { GenericCallView, TerminalCallView, ToolResult, ToolResultView } from '@deepseek-ai/dsh-tools'

type CallArgs = { command: string, description?: string, run_in_background?: boolean }

export function presentCall(args: CallArgs): GenericCallView | TerminalCallView {
  const { command: title, description } = args
  if (args.run_in_background === true) {
    const content = description === undefined ? {} : { content: [{ type: 'text' as const, text: description }] }
    return { card: 'generic', title, kind: 'execute', rawInput: title, ...content }
  }
  return { card: 'terminal', title, ...description !== undefined ? { description } : {} }
}

export function presentResult(args: CallArgs, result: ToolResult): ToolResultView | undefined {
  const block = result.content.length === 1 ? result.content[0] : undefined
  if (block === undefined || block.type !== 'text') return undefined
  // The exit facts the tool projects into `meta` for the terminal card.
  const meta = result.meta
  if (args.run_in_background === true || result.isError || typeof meta !== 'object' || meta === null || !('exit_code' in meta)) {
    return { card: 'generic', content: [{ type: 'text', text: `\`\`\`console\n${block.text.replace(/\n+$/, '')}\n\`\`\`` }] }
  }
  const exit = meta as { exit_code: number | null, signal: string | null }
  return {
    card: 'terminal',
    output: block.text,
    ...exit.exit_code !== null ? { exitCode: exit.exit_code } : {},
    ...exit.signal !== null ? { signal: exit.signal } : {},
  }
}
