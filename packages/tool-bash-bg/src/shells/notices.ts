/**
 * Pure: what the model is told of a shell it did not see end, one line per shell, rebuilt from its ledger record
 * alone (a notice sent again after a crash reads as the first one did).
 */
import { echo, escapeName, formatBytes, formatDuration } from '@gencode-ai/dsh-tool-common'
import type { LedgerRecord } from '../local/ledger.ts'

/** A command named in a notice: escaped, quoted, cut, so no command forges a line. */
/** What a completion line names. */
type Told = Pick<LedgerRecord, 'shellId' | 'command' | 'log' | 'exitCode' | 'signal'>

const named = (record: Told) => echo(record.command, 60)
const clock = (at: number) => `${new Date(at).toISOString().slice(11, 16)} UTC`
const output = (record: Told) => `; output: ${escapeName(record.log)}`

function ending(record: Told): string {
  if (record.signal !== undefined && record.signal !== null) return `was killed by ${record.signal}`
  return `exited with code ${record.exitCode ?? 'unknown'}`
}

/**
 * A shell that ended while its host ran, in tool-jobs' words (which the model knows from other jobs), with the shell
 * id and its log: `background job bash_bg-1 (bash_bg: make test) finished [status: completed, exit code: 0]. …`.
 */
export function completionLine(record: Told, jobId: string | undefined): string {
  const status = record.signal === undefined || record.signal === null
    ? `completed, exit code: ${record.exitCode ?? 'unknown'}`
    : `killed, signal: ${record.signal}`
  const label = escapeName(Array.from(record.command).length > 200 ? `${Array.from(record.command).slice(0, 200).join('')}…` : record.command)
  const log = escapeName(record.log)
  return jobId === undefined
    ? `background shell ${record.shellId} (${label}) finished [status: ${status}]. Its log: ${log}.`
    : `background job ${jobId} (bash_bg: ${label}) finished [status: ${status}]. Shell ${record.shellId}; its log: ${log} (job_output ${jobId} reads new output).`
}

/**
 * A shell found at resume: taken back, ended meanwhile, stopped at the last host's exit, or vanished. `unattended`:
 * it ended while no host was running (the record still said running); otherwise a host saw the end and did not tell it.
 */
export function resumeLine(record: LedgerRecord, now: number, bytes: number, unattended = false): string {
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
      return `${id} ${named(record)} ${ending(record)}${at}${unattended ? ' while no host was running' : ''}${output(record)}`
    }
  }
}

/** A notice sent again after a crash, rebuilt from its record (a job id it named belonged to the host that died). */
export function retellLine(record: LedgerRecord, now: number): string {
  return record.state === 'ended' || record.state === 'killed' ? completionLine(record, undefined) : resumeLine(record, now, 0)
}

/** A shell proven running that this host could not register again (another host holds it). */
export function notTakenBack(record: LedgerRecord): string {
  return `${record.shellId} ${named(record)} still running, but held by another host: not taken back here`
}

/** The notice's one-line account (the host bounds it to 120 characters). */
export function summaryOf(lines: readonly string[]): string {
  const first = lines[0] ?? ''
  const more = lines.length > 1 ? ` (+${lines.length - 1} more)` : ''
  return `${first.slice(0, 100 - more.length)}${more}`
}
