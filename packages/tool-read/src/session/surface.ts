/**
 * What the calling session shows the model, read from the host's own log and surface (no private cache): the step a
 * call belongs to, and this tool's earlier results with whether each is still on the surface as it was appended.
 */

import type { JsonValue, SessionEvent } from '@deepseek-ai/dsh-session'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'

/** The step of one call: the agent loop's turn and step that issued it (its `tool/call` event). */
export interface Step {
  /** The session object: budgets live as long as it does. */
  session: object
  turn: number
  step: number
}

/** An earlier result of this tool in the session. */
export interface EarlierResult {
  callId: string
  turn: number
  step: number
  /** Still on the model-visible surface as appended: not compacted away, not rewritten by a pruner. */
  visible: boolean
  isError: boolean
  meta: JsonValue | undefined
}

export interface SessionView {
  step: Step
  /** This tool's results before the call, latest first; undefined when the host exposes no surface. */
  earlier: EarlierResult[] | undefined
}

/** The log: `snapshotEvents()` from DSH 0.1.3 on (the `events` getter is gone there), else `events`. */
function eventsOf(session: object): readonly SessionEvent[] | undefined {
  const later = session as { snapshotEvents?: unknown, events?: unknown }
  if (typeof later.snapshotEvents === 'function') return (later.snapshotEvents as () => readonly SessionEvent[]).call(session)
  return Array.isArray(later.events) ? later.events as readonly SessionEvent[] : undefined
}

/** The surface's current nodes (event seqs), or undefined on a host without one. */
function surfaceOf(session: object): ReadonlySet<number> | undefined {
  const nodes = (session as { surface?: { nodes?: unknown } }).surface?.nodes
  return Array.isArray(nodes) ? new Set(nodes as number[]) : undefined
}

/** The call's step and this tool's earlier results; undefined without an agent, a log, or the call's own `tool/call`. */
export function sessionView(exec: Pick<ToolExecution, 'agent' | 'rootCallId'>, toolName: string): SessionView | undefined {
  const session = exec.agent?.session as object | undefined
  if (session === undefined) return undefined
  const events = eventsOf(session)
  if (events === undefined) return undefined
  let own: SessionEvent<'tool/call'> | undefined
  for (let i = events.length - 1; i >= 0 && own === undefined; i--) {
    const event = events[i]
    if (event?.type === 'tool/call' && event.data.callId === exec.rootCallId) own = event
  }
  if (own === undefined || own.data.name !== toolName) return undefined
  const step = { session, turn: own.data.turn, step: own.data.step }
  const nodes = surfaceOf(session)
  if (nodes === undefined) return { step, earlier: undefined }
  const ours = new Set<string>()
  for (const event of events) {
    if (event.type === 'tool/call' && event.data.name === toolName && event.seq < own.seq) ours.add(event.data.callId)
  }
  const earlier: EarlierResult[] = []
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (event?.type !== 'tool/result' || event.surfaceOp !== 'append') continue
    const [block] = event.data.message.content
    const callId = String(block.toolCallId)
    if (!ours.has(callId)) continue
    const { turn, step: stepOf, meta } = event.data
    earlier.push({ callId, turn, step: stepOf, visible: nodes.has(event.seq), isError: block.isError === true, meta })
  }
  return { step, earlier }
}
