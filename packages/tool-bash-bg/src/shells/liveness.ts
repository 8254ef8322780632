/** Pure: how a shell is doing, in a few words, so a quiet shell is not mistaken for a dead one. */
import { formatBytes, formatDuration } from '@gencode-ai/dsh-tool-common'
import type { ShellSnapshot as ShellRecord } from '../contract.ts'

const leaderEnd = (record: ShellRecord) => record.signal ?? `exit ${record.exit_code ?? 0}`

/** 'running', or once the leader exited while processes remain, 'exit 0, 2 left'. */
export function statusOf(record: ShellRecord): string {
  if (record.status !== 'running' || record.leader_exited_at === null) return record.status
  return `${leaderEnd(record)}, ${record.processes} left`
}

/** '12.3 KiB, last 3s ago', or 'no output'. */
export function outputOf(record: ShellRecord, now: number): string {
  const problem = record.log_problem === undefined ? '' : `${record.log_problem}, `
  if (record.last_output_at === null) return `${problem}no output`
  return `${problem}${formatBytes(record.bytes)}, last ${formatDuration(now - Date.parse(record.last_output_at))} ago`
}

/** 'running 5m12s, 12.3 KiB, last 3s ago' / 'running 1m02s (leader exit 0, 2 left), no output' / 'completed after 3s, …'. */
export function liveness(record: ShellRecord, now: number): string {
  const ran = formatDuration((record.ended_at === null ? now : Date.parse(record.ended_at)) - Date.parse(record.started_at))
  if (record.status !== 'running') return `${record.status} after ${ran}, ${outputOf(record, now)}`
  const leader = record.leader_exited_at === null ? '' : ` (leader ${leaderEnd(record)}, ${record.processes} left)`
  return `running ${ran}${leader}, ${outputOf(record, now)}`
}
