/**
 * A shell that ended while its host ran (its ledger record already says how): its session's model is told by this
 * plugin's own notice (tool-jobs' is held back: see `HostJobs.hold`), exactly once. A shell the model stopped
 * (kill_shell, job_kill) was told by that call: its record goes. One stopped by the host's exit is left to the
 * exit policy's record, told at the next resume.
 */
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ShellSnapshot } from '../contract.ts'
import type { Ledger } from '../local/ledger.ts'
import type { NoticeDelivery } from './delivery.ts'
import { completionLine } from './notices.ts'

/** Who stopped a shell: the model (its own call said so), or the host's exit or the owner's disposal. */
export type StopCause = 'model' | 'exit'

/** The cancel reasons the host's jobs give at teardown (rc.8 and 0.1.7 alike); any other is a model's job_kill. */
const TEARDOWN_REASONS: readonly string[] = ['jobs service disposed', 'owner disposed'] as const

/** Who a job's cancel with `reason` comes from. */
export const causeOf = (reason: string | undefined): StopCause => reason !== undefined && TEARDOWN_REASONS.includes(reason) ? 'exit' : 'model'

export interface CompletionOptions {
  ledger: () => Ledger | undefined
  delivery: NoticeDelivery
  /** The live agent serving a session now (the registered one: after a resume, not the one that started the shell). */
  agentOf: (session: string) => Agent | undefined
}

export class Completions {
  constructor(private readonly options: CompletionOptions) {}

  settled(shell: ShellSnapshot, cause: StopCause | undefined): void {
    const ledger = this.options.ledger()
    if (shell.owner === '' || ledger === undefined || cause === 'exit') return
    // The model stopped it, and its call said so: nothing to tell, and the record goes without holding up that call.
    if (cause === 'model') {
      ledger.discard(shell.owner, shell.id)
      return
    }
    // No host job carries it (no job controller serves the session): no notice now, as before; the record says ended,
    // and the session's next resume tells it.
    if (shell.job_id === undefined) return
    // The registry recorded the end a moment ago: the notice is built from that record.
    const record = ledger.read(shell.owner, shell.id)
    const agent = this.options.agentOf(shell.owner)
    // No agent serves the session now: the record says ended, and its next resume tells it.
    if (agent === undefined) return
    const told = record ?? {
      shellId: shell.id, command: shell.command, log: shell.output_file, exitCode: shell.exit_code, signal: shell.signal,
    }
    const records = record === undefined ? [] : [record]
    this.options.delivery.send(agent, records, [completionLine(told, shell.job_id)], true)
  }
}
