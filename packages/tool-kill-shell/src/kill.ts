// One kill_shell stop: the registry's stop (which owns the signals, the host job and the wait), awaited until the
// call is aborted, and its outcome as the tool's value.
import type { BackgroundShells, Caller, KillRequest, ShellSnapshot, StopOutcome } from '@gencode-ai/dsh-tool-bash-bg'
import { aborted } from '@gencode-ai/dsh-tool-common'
import type { KillShellValue } from './value.ts'

/** Await `work`, but give up (not the work) when the call is aborted; `toolName` names this tool in the error. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, toolName: string): Promise<T> {
  const stopped = () => aborted(`${toolName} aborted while waiting; the kill itself goes on — check the shell again with /tasks`)
  if (signal.aborted) return Promise.reject(stopped())
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

/** What tracking by marks cannot see: a process with neither the group nor the mark, from before any look. */
const MARKS_UNSEEN = 'a process that cleared its environment and left the group before a scan saw it'

export function valueOf(stop: StopOutcome): KillShellValue {
  const { shell } = stop
  return {
    success: stop.survivors.length === 0,
    shell_id: shell.id,
    outcome: stop.outcome,
    signal_sent: stop.signal_sent,
    force_killed: stop.force_killed,
    exit_code: stop.exit_code,
    elapsed_ms: stop.elapsed_ms,
    survivors: stop.survivors,
    timeout_ms: stop.timeout_ms,
    command: shell.command,
    ...stop.joined === true ? { joined: true } : {},
    ...stop.outcome === 'already-exited' ? { note: `Shell already ${shell.status === 'running' ? 'exited' : shell.status}` } : {},
    ...stop.world_limits === undefined ? {} : { world_limits: stop.world_limits },
    ...stop.tracking === undefined ? {} : { tracking: stop.tracking },
    ...stop.tracking === 'marks' && stop.outcome !== 'already-exited' ? { unseen: MARKS_UNSEEN } : {},
  }
}

/** Stop `shell` (found for `caller`); the value says what was sent, what escalated and what survived. */
export async function killShell(
  registry: BackgroundShells, shell: ShellSnapshot, request: KillRequest, caller: Caller | undefined, signal: AbortSignal, toolName: string,
): Promise<KillShellValue> {
  return valueOf(await untilAborted(registry.stop(shell.id, request, caller), signal, toolName))
}
