/**
 * Completion notices, each reaching its session's model once across restarts and crashes. The message id is chosen
 * and written to the shell's ledger record (`delivering`, durably) before the message is handed to the agent; the
 * session log is the acknowledgement: once a `user/message` with that id is logged and flushed, the record says
 * `delivered` (and an ended shell's record goes). A host that dies in between leaves `delivering`, and the next host
 * to serve the session looks in the log (present: delivered), in the replayed inbox (pending: wait for its claim),
 * or sends the same message again (absent).
 */
import { randomUUID } from 'node:crypto'
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { boundContextSummary, createUserMessage, freezeMessage, MessageId, type UserMessage } from '@deepseek-ai/dsh-llm'
import type { Session, SessionEvent } from '@deepseek-ai/dsh-session'
import type { Ledger, LedgerRecord } from '../local/ledger.ts'
import { summaryOf } from './notices.ts'

/** The two instants between handing a notice over and recording it delivered (where a crash test aims). */
type DeliveryPhase = 'delivering' | 'logged'

export interface DeliveryOptions {
  ledger: () => Ledger | undefined
  /** Most completion notices that may wake an idle agent per user turn (tool-jobs' rule); the rest wait for a turn. */
  maxWakes: number
  /** The plugin's name in the notice's source. */
  plugin: string
}

/** The log across hosts: `snapshotEvents()` from DSH 0.1.3 (the `events` getter is gone there), else `events`. */
export function eventsOf(session: Session): readonly SessionEvent[] {
  const later = session as unknown as { snapshotEvents?: () => readonly SessionEvent[] }
  return typeof later.snapshotEvents === 'function' ? later.snapshotEvents() : session.events
}

const logged = (session: Session, id: string) => eventsOf(session).some((event) => event.type === 'user/message' && event.data.id === id)
const pendingIn = (agent: Agent, id: string) => [...agent.inbox.nextStep, ...agent.inbox.nextTurn].some((message) => message.id === id)

export class NoticeDelivery {
  /** Wakes spent per agent since its last user message. */
  private readonly wakes = new WeakMap<Agent, number>()
  /** Notices handed over and not yet logged, by message id: the session and the shells each one tells of. */
  private readonly pending = new Map<string, { session: string, shellIds: readonly string[] }>()

  constructor(private readonly ctx: Context, private readonly options: DeliveryOptions) {
    ctx.on('agent/inbox/claimed', ({ agent, message }) => {
      if (message.source.kind === 'user') this.wakes.delete(agent)
    })
    ctx.on('session/event', (session, event) => {
      if (event.type === 'user/message' && this.pending.has(event.data.id)) void this.confirm(session, event.data.id)
    })
  }

  /**
   * Hand one notice telling of `records` to `agent`: recorded `delivering` first. `wake`: an idle agent may start a
   * turn for it (within the wake budget); otherwise it waits for the next step.
   */
  send(agent: Agent, records: readonly LedgerRecord[], lines: readonly string[], wake: boolean, messageId = `bash-bg-${randomUUID()}`): string {
    const ledger = this.options.ledger()
    try {
      for (const record of records) ledger?.update(agent.id, record.shellId, { delivery: { messageId, state: 'delivering' } })
    } catch {
      // Unrecorded (a full disk): sent all the same; a resume may then tell it again, which beats never.
    }
    this.ctx.emit('bash-bg/delivery', { phase: 'delivering', session: agent.id, messageId })
    this.pending.set(messageId, { session: agent.id, shellIds: records.map((record) => record.shellId) })
    const message: UserMessage = freezeMessage({
      id: MessageId(messageId), role: 'user', content: [{ type: 'text', text: lines.join('\n') }],
      source: { kind: 'plugin', plugin: this.options.plugin, form: 'notice', summary: summaryOf(lines) },
    })
    this.hand(agent, message, wake)
    return messageId
  }

  /**
   * A notice with nothing to record (a watch's matches): the same lanes and the same wake budget as completions, so
   * an idle agent is woken at most `maxWakes` times a user turn by this plugin, whatever tells it.
   */
  tell(agent: Agent, text: string, summary: string): void {
    const message = createUserMessage({
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: this.options.plugin, form: 'notice', summary: boundContextSummary(summary) },
    })
    this.hand(agent, message, true)
  }

  /** Idle and within the budget (`wake`): a turn of its own; otherwise its next step. */
  private hand(agent: Agent, message: UserMessage, wake: boolean): void {
    const spent = this.wakes.get(agent) ?? 0
    if (wake && agent.status === 'idle' && spent < this.options.maxWakes) {
      this.wakes.set(agent, spent + 1)
      agent.followup(message)
    } else {
      agent.inject(message)
    }
  }

  /** The notice is in the log: once it is durable, the record says delivered, and an ended shell's record goes. */
  private async confirm(session: Session, messageId: string): Promise<void> {
    const entry = this.pending.get(messageId)
    if (entry === undefined) return
    this.pending.delete(messageId)
    await this.ctx.get('sessions')?.flush(session)
    this.ctx.emit('bash-bg/delivery', { phase: 'logged', session: entry.session, messageId })
    const ledger = this.options.ledger()
    if (ledger === undefined) return
    for (const shellId of entry.shellIds) this.settle(ledger, entry.session, shellId, messageId)
  }

  private settle(ledger: Ledger, session: string, shellId: string, messageId: string): void {
    const record = ledger.list(session).find((each) => each.shellId === shellId)
    if (record?.delivery?.messageId !== messageId) return
    if (record.state === 'running') ledger.update(session, shellId, { delivery: { messageId, state: 'delivered' } })
    else ledger.remove(session, shellId)
  }

  /**
   * At resume, for the records a crash left `delivering` (or `delivered` and not yet removed): in the log, settled;
   * pending in the replayed inbox, confirmed when its claim is logged; absent, sent again under the same id, by
   * `resend(records, messageId)` (the caller rebuilds its text). Returns the records that still need telling.
   */
  recover(agent: Agent, records: readonly LedgerRecord[], resend: (records: LedgerRecord[], messageId: string) => void): void {
    const ledger = this.options.ledger()
    const byMessage = new Map<string, LedgerRecord[]>()
    for (const record of records) {
      const id = record.delivery?.messageId
      if (id === undefined) continue
      byMessage.set(id, [...byMessage.get(id) ?? [], record])
    }
    for (const [id, group] of byMessage) {
      if (logged(agent.session, id) || group.every((record) => record.delivery?.state === 'delivered')) {
        if (ledger !== undefined) for (const record of group) this.settle(ledger, agent.id, record.shellId, id)
      } else if (pendingIn(agent, id)) {
        this.pending.set(id, { session: agent.id, shellIds: group.map((record) => record.shellId) })
      } else {
        resend(group, id)
      }
    }
  }
}

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** A completion notice of session `session` reached `phase` (observed by tests that crash the host there). */
    'bash-bg/delivery'(payload: { phase: DeliveryPhase, session: string, messageId: string }): void
  }
}
