/** The /tasks command: the table of seed 001 (a human view), from registry records. */
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-commands'
import { outputOf, statusOf } from './liveness.ts'
import type { ShellRegistry } from './registry.ts'
import type { BackgroundShellRegistry, ShellRecord } from './registry-types.ts'

const COLUMNS = [12, 21, 14, 17, 22] as const
const INNER = 1 + COLUMNS.reduce((sum, width) => sum + width, 0) + 1

/** The seed's closing hint, naming the tool that stops a task in this composition. */
function tasksHint(stopTool: string | undefined): string | undefined {
  if (stopTool === 'job_kill') return 'Use job_kill with a job id to stop a task.'
  return stopTool === undefined ? undefined : `Use ${stopTool} with a shell_id to stop a task.`
}
const NO_TASKS = 'No background shells are running.'

/** "5 min ago" style age. */
export function ago(startedAt: string, now: number): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(startedAt)) / 1000))
  if (seconds < 60) return `${seconds} sec ago`
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`
  return `${Math.floor(seconds / 3600)} h ago`
}

function cell(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  const fitted = flat.length > width - 1 ? `${flat.slice(0, width - 2)}…` : flat
  return fitted.padEnd(width)
}

function row(cells: readonly string[]): string {
  return `│ ${cells.map((text, i) => cell(text, COLUMNS[i] ?? 0)).join('')} │`
}

/**
 * The seed's table plus liveness: run time (Started), status (with the leader's end and what is
 * left once it exited), output size and its age.
 */
export function renderTasks(records: readonly ShellRecord[], now: number, stopTool: string | undefined): string {
  if (records.length === 0) return NO_TASKS
  const hint = tasksHint(stopTool)
  return [
    'Active Background Tasks:',
    `┌${'─'.repeat(INNER)}┐`,
    row(['ID', 'Command', 'Started', 'Status', 'Output']),
    `├${'─'.repeat(INNER)}┤`,
    ...records.map((record) => row([record.id, record.command, ago(record.started_at, now), statusOf(record), outputOf(record, now)])),
    `└${'─'.repeat(INNER)}┘`,
    ...hint === undefined ? [] : ['', hint],
  ].join('\n')
}

/** Register /tasks whenever ctx.commands is composed: the calling session's running shells (and agentless ones). */
export function provideTasksCommand(ctx: Context, registry: ShellRegistry): void {
  ctx.inject(['commands'], (scoped) => {
    scoped.commands.register({
      name: 'tasks',
      description: 'List running background shells.',
      handler: ({ agent }) => {
        const shells = registry.running().filter((record) => record.owner === agent.id || record.owner === '')
        const table = renderTasks(shells, Date.now(), stopToolOf(ctx, registry))
        // Said once: the shells a dead host left running, stopped when this one started.
        const notice = registry.leftoverNotice
        registry.leftoverNotice = undefined
        return { kind: 'success', text: notice === undefined ? table : `${notice}.\n${table}` }
      },
    })
  })
}

/** kill_shell (under its configured name) when composed, else the host's job_kill tool when registered. */
export function stopToolOf(ctx: Context, registry: BackgroundShellRegistry): string | undefined {
  if (registry.stopTool !== undefined) return registry.stopTool
  return ctx.get('tools')?.get('job_kill') === undefined ? undefined : 'job_kill'
}
