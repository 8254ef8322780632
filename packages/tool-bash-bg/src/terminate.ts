/**
 * Signal, wait, escalate: the one place a shell's process group is killed. kill_shell's
 * request, the host's job_kill (SIGTERM, 5 s, SIGKILL), a foreground timeout and plugin
 * dispose all come through here.
 */
import type { ProcessGroup } from './group.ts'
import type { KillOutcome, KillRequest } from './registry-types.ts'

/** After SIGKILL, how long to wait for the kernel to finish the group before reporting survivors. */
const AFTER_SIGKILL_MS = 1000

/** A bare host `job_kill` until tool-kill-shell sets its own default (registry.defaultKill). */
export const DEFAULT_KILL: KillRequest = { signal: 'SIGTERM', force: true, timeoutMs: 5000 }

/** `onSignalled` runs (synchronously) once the first signal reached a live group. */
export async function terminateGroup(group: ProcessGroup, request: KillRequest, onSignalled?: () => void): Promise<KillOutcome> {
  const started = Date.now()
  const outcome = (signal_sent: KillOutcome['signal_sent'], force_killed: boolean, survivors: number[]): KillOutcome => ({
    signal_sent,
    force_killed,
    exit_code: group.leaderExit?.code ?? null,
    elapsed_ms: Date.now() - started,
    timeout_ms: request.timeoutMs,
    survivors,
  })
  if (!group.signal(request.signal)) return outcome('none', false, [])
  onSignalled?.()
  if (await group.waitEmpty(request.timeoutMs, 50, true)) return outcome(request.signal, false, [])
  if (!request.force) return outcome(request.signal, false, group.census())
  group.signal('SIGKILL')
  const empty = await group.waitEmpty(AFTER_SIGKILL_MS, 50, true)
  return outcome(request.signal, true, empty ? [] : group.census())
}
