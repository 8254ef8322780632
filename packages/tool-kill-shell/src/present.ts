// kill_shell's UI cards (pure): the call's title and the outcome's box.
import type { JsonValue } from '@deepseek-ai/dsh-session'
import type { GenericCallView, GenericResultView, ToolResult } from '@deepseek-ai/dsh-tools'
import { formatDuration } from '@gencode-ai/dsh-tool-common'
import { processes } from './render.ts'
import type { KillShellValue } from './value.ts'

/** The card of the README's UI card section: 53 columns wide, text in a 50-column field; wider text grows it up to 80. */
const MIN_FIELD = 50
const MAX_FIELD = 77

function box(title: string, lines: readonly string[]): string {
  const field = Math.min(MAX_FIELD, Math.max(MIN_FIELD, title.length + 2, ...lines.map((line) => line.length)))
  const fit = (line: string) => line.length > field ? `${line.slice(0, field - 1)}…` : line.padEnd(field)
  return [
    `┌─ ${title} ${'─'.repeat(Math.max(1, field - title.length - 2))}┐`,
    ...lines.map((line) => `│ ${fit(line)}│`),
    `└${'─'.repeat(field + 1)}┘`,
  ].join('\n')
}

/** The card for a finished call, from the value carried in presentationMeta. */
export function cardFor(value: KillShellValue): { title: string, text: string } {
  const id = `Shell ID: ${value.shell_id}`
  const command = `Command: ${value.command}`
  const signals = value.force_killed ? `Signal: ${value.signal_sent} → SIGKILL` : `Signal: ${value.signal_sent}`
  switch (value.outcome) {
    case 'terminated': {
      const status = value.signal_sent === 'SIGKILL' ? 'Status: Killed' : 'Status: Terminated gracefully'
      return { title: 'Process Terminated', text: box('Process Terminated', [id, command, signals, status]) }
    }
    case 'force-killed':
      return {
        title: 'Process Force Killed',
        text: box('Process Force Killed', [
          id,
          signals,
          `Status: Force killed after ${formatDuration(value.timeout_ms, 'tenths')} timeout`,
          `Note: Process did not respond to ${value.signal_sent}`,
        ]),
      }
    case 'survivors':
      return {
        title: 'Process Still Running',
        text: box('Process Still Running', [
          id,
          command,
          signals,
          `Status: ${processes(value.survivors.length)} alive after ${formatDuration(value.elapsed_ms, 'tenths')}`,
          `Survivors: ${value.survivors.join(', ')}`,
        ]),
      }
    case 'already-exited':
      return {
        title: 'Process Already Exited',
        text: box('Process Already Exited', [id, command, `Status: ${value.note ?? 'Shell already exited'}`]),
      }
  }
}

export function presentCall(args: { shell_id: string, signal?: string }): GenericCallView {
  const signal = args.signal === undefined ? '' : ` (${args.signal})`
  return { card: 'generic', title: `Kill shell ${args.shell_id}${signal}`, kind: 'execute', rawInput: args.shell_id }
}

/** A value-shaped meta, checked softly: replayed logs may hold older or foreign shapes. */
function asValue(meta: JsonValue | undefined): KillShellValue | undefined {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined
  const { shell_id, outcome, survivors } = meta as Record<string, JsonValue>
  if (typeof shell_id !== 'string' || typeof outcome !== 'string' || !Array.isArray(survivors)) return undefined
  return meta as unknown as KillShellValue
}

export function presentResult(result: ToolResult): GenericResultView | undefined {
  if (result.isError) {
    const [block] = result.content
    // The runtime wraps failures as 'Error: <message>'; accept the bare message too.
    const text = (block?.type === 'text' ? block.text : '').replace(/^Error: /, '')
    if (!text.startsWith('Shell not found:')) return undefined
    const lines = text.split('\n')
    // The README's not-found card: the error line and the /tasks hint (the known ids stay in the model text).
    return {
      card: 'generic',
      title: 'Shell not found',
      content: [{ type: 'text', text: `Error: ${lines[0]}\n${lines[lines.length - 1]}` }],
    }
  }
  const value = asValue(result.meta)
  if (value === undefined) return undefined
  const card = cardFor(value)
  return { card: 'generic', title: card.title, content: [{ type: 'text', text: card.text }] }
}
