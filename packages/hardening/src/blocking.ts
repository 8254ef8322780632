// A bound for hostile cases whose failure mode is a blocked event loop, where a timer alone cannot fire in time.
import { withinMs } from './budget.ts'

/**
 * Settle within `ms`, judged by a timer and, as a synchronous block holds the timer back until it ends, by the time
 * taken as well. Generous: a hang, or work growing past all reason, fails it; ordinary slowness does not.
 */
export async function endsWithin<T>(ms: number, label: string, promise: Promise<T>): Promise<T> {
  const started = performance.now()
  const value = await withinMs(ms, label, promise)
  const took = performance.now() - started
  if (took > ms) throw new Error(`hang: ${label} held the host ${Math.round(took)} ms (bound ${ms} ms)`)
  return value
}
