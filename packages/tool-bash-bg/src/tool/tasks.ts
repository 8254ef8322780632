/** The /tasks command: the README's shell table (a human view) plus liveness, from registry records. */
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-commands'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { formatDuration, toolNamed } from '@gencode-ai/dsh-tool-common'
import { outputOf, statusOf } from '../shells/liveness.ts'
import type { ShellSnapshot } from '../contract.ts'
import type { ShellRegistry } from '../shells/registry.ts'

const COLUMNS = [12, 21, 14, 17, 22] as const
const RULE = '─'.repeat(1 + COLUMNS.reduce((sum, width) => sum + width, 0) + 1)

export function ago(startedAt: string, now: number): string {
  return `${formatDuration(now - Date.parse(startedAt), 'coarse')} ago`
}

function row(cells: readonly string[]): string {
  const fitted = cells.map((text, i) => {
    const width = COLUMNS[i] ?? 0
    const flat = text.replace(/\s+/g, ' ').trim()
    return (flat.length > width - 1 ? `${flat.slice(0, width - 2)}…` : flat).padEnd(width)
  })
  return `│ ${fitted.join('')} │`
}

/** `readWith`: where new output is read (a line after the table). */
export function renderTasks(records: readonly ShellSnapshot[], now: number, stopTool: string | undefined, readWith?: string): string {
  if (records.length === 0) return 'No background shells are running.'
  const lines = [
    'Active Background Tasks:',
    `┌${RULE}┐`,
    row(['ID', 'Command', 'Started', 'Status', 'Output']),
    `├${RULE}┤`,
    ...records.map((record) => row([record.id, record.command, ago(record.started_at, now), statusOf(record), outputOf(record, now)])),
    `└${RULE}┘`,
  ]
  if (readWith !== undefined) lines.push('', readWith)
  if (stopTool === 'job_kill') lines.push('', 'Use job_kill with a job id to stop a task.')
  else if (stopTool !== undefined) lines.push('', `Use ${stopTool} with a shell_id to stop a task.`)
  return lines.join('\n')
}

/** The host's job_output for shells that are host jobs (new output only), else the read tool from a line, when registered. */
function readHint(ctx: Context, agent: ToolExecution['agent'], shells: readonly ShellSnapshot[]): string | undefined {
  const jobs = shells.filter((shell) => shell.job_id !== undefined)
  if (jobs.length > 0 && ctx.tools.get('job_output', agent) !== undefined) {
    return `Read new output with job_output <job id>: ${jobs.map((shell) => `${shell.id} is ${shell.job_id}`).join(', ')}.`
  }
  const read = toolNamed(ctx, agent === undefined ? {} : { agent }, 'read', 'read_file')
  return shells.length > 0 && ctx.tools.get(read, agent) !== undefined ? `Read output with ${read} <output file> offset=<next line>.` : undefined
}

/** /tasks whenever ctx.commands is composed: the calling session's running shells (and agentless ones). */
export function provideTasksCommand(ctx: Context, registry: ShellRegistry): void {
  ctx.inject(['commands'], (scoped) => {
    scoped.commands.register({
      name: 'tasks',
      description: 'List running background shells.',
      handler: async ({ agent }) => {
        // Right after a resume: the shells it takes back are listed once they are.
        await registry.takenBack(agent)
        const shells = registry.list(agent).filter((shell) => shell.status === 'running')
        const table = renderTasks(shells, Date.now(), registry.stopTool(), readHint(ctx, agent, shells))
        // Said once: the shells a dead host left running, stopped when this one started.
        const notice = registry.takeLeftoverNotice()
        return { kind: 'success', text: notice === undefined ? table : `${notice}.\n${table}` }
      },
    })
  })
}
