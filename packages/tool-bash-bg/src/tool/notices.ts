/**
 * A notice to the agent that owns a shell, through the host's lanes as dsh-tool-jobs delivers its completions: added to
 * the next step while the agent is busy; while it is idle, a turn of its own (a wake) up to WAKES times per user turn,
 * then added without a wake. A wake replays the whole context to the model, so wakes are the expensive lane.
 */
import type { Context } from '@deepseek-ai/cordis'
import { boundContextSummary, createUserMessage, type UserMessage } from '@deepseek-ai/dsh-llm'

/** Wakes per agent between two user messages (dsh-tool-jobs' default budget). */
const WAKES = 3

/** The owner agent as the lanes need it (a tool call's `exec.agent`). */
export interface NoticeOwner {
  readonly status: string
  inject(message: UserMessage): void
  followup(message: UserMessage): void
}

export class Notices {
  /** Wakes spent per agent object since its last user message. */
  private readonly spent = new WeakMap<object, number>()

  constructor(ctx: Context, private readonly plugin: string) {
    ctx.on('agent/inbox/claimed', ({ agent, message }) => {
      if (message.source.kind === 'user') this.spent.delete(agent)
    })
  }

  /** Delivers `text` to `owner`; `summary` is the transcript's one-line account. Returns whether it woke the agent. */
  deliver(owner: NoticeOwner, text: string, summary: string): boolean {
    const message = createUserMessage({
      content: [{ type: 'text', text }],
      source: { kind: 'plugin', plugin: this.plugin, form: 'notice', summary: boundContextSummary(summary) },
    })
    const spent = this.spent.get(owner) ?? 0
    if (owner.status === 'idle' && spent < WAKES) {
      this.spent.set(owner, spent + 1)
      owner.followup(message)
      return true
    }
    owner.inject(message)
    return false
  }
}
