// Driving one agent turn in tests: run it, wait for idle, read the session's tool results.
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'

export function waitForIdle(ctx: Context, agent: Agent): Promise<void> {
  return new Promise((resolve) => {
    const dispose = ctx.on('agent/status', ({ agent: subject, status }) => {
      if (subject === agent && status === 'idle') {
        dispose()
        resolve()
      }
    })
  })
}

/** The session log across hosts: `snapshotEvents()` from DSH 0.1.3 (the `events` getter is gone there), else `events`. */
export function sessionEvents(session: object): SessionEvent[] {
  const later = session as { snapshotEvents?: () => readonly SessionEvent[] }
  if (typeof later.snapshotEvents === 'function') return [...later.snapshotEvents()]
  return [...(session as { events: readonly SessionEvent[] }).events]
}

/** Send one user message and wait until the agent's turn (all scripted model turns) is over. */
export async function runTurn(ctx: Context, agent: Agent, text = 'go'): Promise<SessionEvent[]> {
  const idle = waitForIdle(ctx, agent)
  agent.followup(createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }))
  await idle
  return sessionEvents(agent.session)
}

/** The tool results of a session, in order: call id, error flag, and the model-facing text. */
export function toolResults(events: readonly SessionEvent[]): { callId: string, isError: boolean, text: string }[] {
  const out: { callId: string, isError: boolean, text: string }[] = []
  for (const event of events) {
    if (event.type !== 'tool/result') continue
    const [block] = event.data.message.content
    out.push({
      callId: String(block.toolCallId),
      isError: block.isError === true,
      text: block.content.map((part) => part.type === 'text' ? part.text : `[${part.type}]`).join(''),
    })
  }
  return out
}
