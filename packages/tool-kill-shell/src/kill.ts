import type { Agent } from '@deepseek-ai/dsh-agent'
import { JobId, type JobRegistry } from '@deepseek-ai/dsh-jobs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { TOOL_ABORTED } from '@deepseek-ai/dsh-tools'
import type { BackgroundShellRegistry, KillOutcome, KillRequest, ShellRecord } from '@gencode-ai/dsh-tool-bash-bg'
import type { KillShellValue } from './value.ts'

export interface KillDeps {
  registry: BackgroundShellRegistry
  /** The host job registry, when composed. */
  jobs: JobRegistry | undefined
}

function aborted(): HarnessError {
  const error = new HarnessError('kill_shell aborted while waiting; the kill itself goes on — check the shell again with /tasks', TOOL_ABORTED)
  error.name = 'AbortError'
  return error
}

/** Await `work`, but give up (not the work) when the call is aborted. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(aborted())
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted())
    signal.addEventListener('abort', onAbort, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function alreadyExited(record: ShellRecord, request: KillRequest, elapsed: number): KillShellValue {
  return {
    success: true,
    shell_id: record.id,
    outcome: 'already-exited',
    signal_sent: 'none',
    force_killed: false,
    exit_code: record.exit_code,
    elapsed_ms: elapsed,
    survivors: [],
    timeout_ms: request.timeoutMs,
    command: record.command,
    // A record the registry does not watch (registered without a process) never settles.
    note: `Shell already ${record.status === 'running' ? 'exited' : record.status}`,
  }
}

/**
 * Stop one registry shell. A shell that is a host job goes through ctx.jobs.kill, so the host
 * records the kill (status stopping, no completion notice later); the request is stored on the
 * record first and the job's cancel carries it out. The outcome comes from the registry's
 * terminate for the same shell, which joins the termination already under way. The signals
 * themselves are sent only by the registry (tool-bash-bg), to the shell's process group and its
 * marked processes; it refuses a pid of the host or its ancestors, never signals a group whose
 * pid was reused (that is `signal_sent: 'none'`, an already-exited value here), and measures the
 * survivors on /proc.
 */
export async function killShell(
  deps: KillDeps,
  record: ShellRecord,
  request: KillRequest,
  agent: Agent | undefined,
  signal: AbortSignal,
): Promise<KillShellValue> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  if (record.status !== 'running') return alreadyExited(record, request, 0)
  if (record.job_id !== undefined && deps.jobs !== undefined) {
    record.kill_request = request
    let answer: 'requested' | 'already-finished'
    try {
      answer = deps.jobs.kill(JobId(record.job_id), agent, `kill_shell ${request.signal}`)
    } finally {
      // The job's cancel consumes the request. One it never reached (jobs.kill threw, or the job
      // had already finished) must not linger: a later bare job_kill would carry it out instead.
      if (record.kill_request === request) delete record.kill_request
    }
    if (answer === 'already-finished') {
      return alreadyExited(await untilAborted(deps.registry.settled(record.id), signal), request, elapsed())
    }
  }
  // A kill already under way is shared rather than restarted (registry terminate): its outcome
  // says which wait applied.
  const outcome: KillOutcome = await untilAborted(deps.registry.terminate(record.id, request), signal)
  if (outcome.signal_sent === 'none') {
    return alreadyExited(await untilAborted(deps.registry.settled(record.id), signal), request, elapsed())
  }
  // The registry ends every kill with a fresh /proc census of the group and of every process
  // carrying the shell's marker (none of its cached state): what survived is that.
  const { survivors } = outcome
  const final = survivors.length === 0 ? await untilAborted(deps.registry.settled(record.id), signal) : record
  return {
    success: survivors.length === 0,
    shell_id: record.id,
    outcome: survivors.length > 0 ? 'survivors' : outcome.force_killed ? 'force-killed' : 'terminated',
    signal_sent: outcome.signal_sent,
    force_killed: outcome.force_killed,
    exit_code: final.exit_code ?? outcome.exit_code,
    elapsed_ms: elapsed(),
    survivors,
    timeout_ms: outcome.timeout_ms,
    command: record.command,
  }
}
