// kill_shell's model text (pure): the outcome, or the not-found text with the shells the caller could mean.
import type { ShellSnapshot } from '@gencode-ai/dsh-tool-bash-bg'
import { shownId } from './quote.ts'
import type { KillShellValue } from './value.ts'

/** The most survivor pids named in the model text; the value always carries them all. */
const MAX_PIDS_SHOWN = 20

function pidList(pids: readonly number[]): string {
  const shown = pids.slice(0, MAX_PIDS_SHOWN).join(', ')
  return pids.length > MAX_PIDS_SHOWN ? `${shown}, … (+${pids.length - MAX_PIDS_SHOWN} more)` : shown
}

export function processes(count: number): string {
  return count === 1 ? '1 process' : `${count} processes`
}

/** The model text: what was sent, whether SIGKILL was needed, how long it took, what survived; another world's limits. */
export function renderKill(value: KillShellValue): string {
  const text = renderOutcome(value)
  return value.world_limits === undefined || value.outcome === 'already-exited' ? text : `${text}\n[${value.world_limits}]`
}

function renderOutcome(value: KillShellValue): string {
  const id = value.shell_id
  if (value.outcome === 'already-exited') {
    const code = value.exit_code === null ? '' : ` (exit code ${value.exit_code})`
    return `${value.note ?? 'Shell already exited'}: ${id}${code}. No signal sent.`
  }
  // One call claims a stop; another made meanwhile says it joined that one (it sent nothing of its own).
  const by = value.joined === true ? 'joined the stop already under way, which ' : ''
  const sent = !value.force_killed
    ? `${by}sent ${value.signal_sent}`
    : `${by}sent ${value.signal_sent}, still running after ${value.timeout_ms} ms, then SIGKILL`
  if (value.outcome === 'survivors') {
    const why = value.force_killed || value.signal_sent === 'SIGKILL'
      ? ''
      : ' (force=false, no SIGKILL sent)'
    const retry = value.signal_sent === 'SIGKILL' || value.force_killed
      ? ' They may be stuck in the kernel or have left the group.'
      : ' Retry with signal SIGKILL.'
    return `Not stopped ${id}: ${sent}${why}; ${processes(value.survivors.length)} still alive after ${value.elapsed_ms} ms: ${pidList(value.survivors)}.${retry}`
  }
  const code = value.exit_code === null ? '' : ` (exit code ${value.exit_code})`
  const needed = value.force_killed || value.signal_sent === 'SIGKILL' ? '' : ' No SIGKILL needed.'
  // Only a cgroup (or another world's own stop) sees every process; marks cannot vouch for one that hid from them.
  const all = value.unseen === undefined ? 'all processes exited' : 'all tracked processes exited'
  const blind = value.unseen === undefined ? '' : ` Not seen by tracking without a cgroup: ${value.unseen}.`
  return `Stopped ${id}: ${sent}; ${all} after ${value.elapsed_ms} ms${code}.${needed}${blind}`
}

/**
 * The not-found text of the README's Errors section, with the shells the caller could mean in between, each with its
 * liveness (status, run time, output, time since the last output). Newest first, running
 * before finished, at most `maxEntries`. The id is echoed capped (see quote.ts).
 */
export function renderNotFound(
  id: string, known: readonly ShellSnapshot[], maxEntries: number, liveness: (record: ShellSnapshot) => string,
): string {
  const ordered = [...known].sort((a, b) =>
    Number(b.status === 'running') - Number(a.status === 'running') || b.started_at.localeCompare(a.started_at))
  const shown = ordered.slice(0, maxEntries).map((record) => `${record.id} (${liveness(record)})`)
  const more = ordered.length > maxEntries ? `, … (+${ordered.length - maxEntries} more)` : ''
  const list = shown.length === 0 ? 'Known shells: none.' : `Known shells: ${shown.join(', ')}${more}.`
  return `Shell not found: ${shownId(id)}\n${list}\nUse /tasks to see available background shells.`
}
