// A spawn in another execution world (exactly the planned argv, cwd and explicit env), and a foreground run there:
// one ctx.subprocess spawn in collect mode, stopped with the seam's terminate().
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { SubprocessHandle, SubprocessOutputReader, SubprocessRuntime, SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import type { Launch } from '../contract.ts'

type Spec = Pick<SubprocessSpawnSpec, 'stdio' | 'graceMs' | 'signal'>
type Marks = Readonly<Record<string, string>>

/** Spawn through the seam; a refusal or a failed start is SPAWN_FAILED, naming the program. */
export function spawnInWorld(toolName: string, runtime: SubprocessRuntime, launch: Launch, spec: Spec, marks: Marks): SubprocessHandle {
  const failed = (cause: unknown) => new HarnessError(
    `${toolName}: ctx.subprocess could not start ${launch.argv[0]} (${cause instanceof Error ? cause.message : String(cause)}) — check that it is installed in that world`,
    'SPAWN_FAILED', { cause },
  )
  let handle: SubprocessHandle
  try {
    handle = runtime.spawn({ argv: launch.argv, cwd: launch.cwd, env: { ...launch.env, ...marks }, ...spec })
  } catch (error) {
    throw failed(error)
  }
  // A failed start rejects `done`; the pid says so at once.
  if (handle.pid <= 0) {
    handle.done.catch(() => {})
    throw failed('no process id')
  }
  return handle
}

/** `graceMs`: the seam's TERM→KILL grace at a timeout or abort; `settleMs`: how long the tree may outlive the output. */
export type SeamRunOptions = { toolName: string, timeoutMs: number, maxOutputBytes: number, signal: AbortSignal, marks: Marks }
  & { graceMs: number, settleMs: number, limits: string, started: (target: ExitStop) => void }

/** What host exit asks of a started run (local/host.ts's ExitTarget, by shape): the seam's one stop, and no look. */
interface ExitStop {
  signalNow(signal: 'SIGTERM' | 'SIGKILL'): boolean
  aliveNow(): boolean
}

/** The kept tail, how many bytes were cut from its start, and the stream's whole size (`bytes`). */
function tail(reader: SubprocessOutputReader | undefined): { text: string, cut: number, bytes: number } {
  if (reader === undefined) return { text: '', cut: 0, bytes: 0 }
  const read = reader.readFrom(0)
  return { text: read.text, cut: read.lossy ? Math.max(0, read.nextOffset - Buffer.byteLength(read.text)) : 0, bytes: read.nextOffset }
}

/** `world_limits`: what this world cannot promise; `leftovers_stopped` is 1 when something of the tree was left (the seam counts none). */
export async function runInSeam(runtime: SubprocessRuntime, launch: Launch, options: SeamRunOptions) {
  const { signal, timeoutMs } = options
  const stop = new AbortController()
  let timedOut = false
  const onAbort = () => stop.abort()
  signal.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => { timedOut = true; stop.abort() }, timeoutMs)
  try {
    if (signal.aborted) stop.abort()
    const collect = { maxBytes: options.maxOutputBytes }
    const spec = { stdio: { stdin: 'ignore' as const, stdout: collect, stderr: collect }, graceMs: options.graceMs, signal: stop.signal }
    const handle = spawnInWorld(options.toolName, runtime, launch, spec, options.marks)
    // At host exit the seam's terminate() is its one stop; whether the tree is gone only its provider can tell.
    options.started({ signalNow: () => { handle.terminate(); return true }, aliveNow: () => false })
    let outcome
    try {
      outcome = await handle.done
    } catch (error) {
      throw new HarnessError(`${options.toolName}: ctx.subprocess failed to run ${launch.argv[0]}: ${error instanceof Error ? error.message : String(error)}`, 'SPAWN_FAILED', { cause: error })
    }
    // Whatever of the tree outlived the command's output is stopped, as the local world stops leftovers.
    let leftovers = 0
    if (!stop.signal.aborted && !await handle.waitForExit(AbortSignal.timeout(options.settleMs))) {
      leftovers = 1
      handle.terminate()
    }
    if (stop.signal.aborted || leftovers > 0) await handle.waitForExit()
    return {
      exit_code: outcome.exitCode,
      signal: outcome.signal,
      timed_out: timedOut,
      timeout_ms: timeoutMs,
      stdout: tail(handle.collected.stdout),
      stderr: tail(handle.collected.stderr),
      leftovers_stopped: leftovers,
      output_held_open: false as const,
      world_limits: options.limits,
      aborted: signal.aborted,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
  }
}
