/**
 * Pure: what the model is told of a shell it did not see end, one line per shell, rebuilt from its ledger record
 * alone (a notice sent again after a crash reads as the first one did).
 */
import { echo, escapeName, formatBytes, formatDuration } from '@gencode-ai/dsh-tool-common'
import type { LedgerRecord } from './ledger-port.ts'

/** A command named in a notice: escaped, quoted, cut, so no command forges a line. */
const named = (record: LedgerRecord) => echo(record.command, 60)
const clock = (at: number) => `${new Date(at).toISOString().slice(11, 16)} UTC`
const output = (record: LedgerRecord) => `; output: ${escapeName(record.log)}`

function ending(record: LedgerRecord): string {
  if (record.signal !== undefined && record.signal !== null) return `was killed by ${record.signal}`
  return `exited with code ${record.exitCode ?? 'unknown'}`
}

/** A shell that ended while its host ran (the host's own completion notice). */
export function completionLine(record: LedgerRecord, jobId: string | undefined): string {
  const job = jobId === undefined ? '' : `; new output: job_output ${jobId}`
  return `Background shell ${record.shellId} ${named(record)} ${ending(record)}${output(record)}${job}`
}

/** A shell found at resume: taken back, ended meanwhile, stopped at the last host's exit, or vanished. */
export function resumeLine(record: LedgerRecord, now: number, bytes: number): string {
  const id = record.shellId
  switch (record.state) {
    case 'running':
      return `${id} ${named(record)} still running (taken back after a host restart; ${formatDuration(now - record.startedAt)}, ${formatBytes(bytes)})`
    case 'stopped-at-exit':
      return `${id} ${named(record)} was stopped when the host exited (keepOnExit is false)${output(record)}`
    case 'interrupted':
      return `${id} ${named(record)} was interrupted: it is gone and no exit status was recorded (not completed)${output(record)}`
    default: {
      const at = record.endedAt === undefined ? '' : ` at ${clock(record.endedAt)}`
      const unattended = record.hostExitedAt === undefined ? '' : ' while no host was running'
      return `${id} ${named(record)} ${ending(record)}${at}${unattended}${output(record)}`
    }
  }
}

/** The notice's one-line account (the host bounds it to 120 characters). */
export function summaryOf(lines: readonly string[]): string {
  const first = lines[0] ?? ''
  const more = lines.length > 1 ? ` (+${lines.length - 1} more)` : ''
  return `${first.slice(0, 100 - more.length)}${more}`
}
