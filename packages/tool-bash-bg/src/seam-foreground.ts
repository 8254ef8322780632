/** A foreground run in another execution world: one ctx.subprocess spawn in collect mode, stopped with the seam's terminate(). */
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { SubprocessOutputReader, SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import type { Launch } from './launch.ts'
import { streamValue } from './output-stream.ts'
import type { ForegroundValue } from './render.ts'
import { worldLimits } from './seam-limits.ts'
import { spawnInWorld } from './seam-spawn.ts'

/** The seam's TERM→KILL grace at a timeout or abort (and its drain of pipes a leftover holds open). */
const GRACE_MS = 2000
/**
 * How long the tree may take to empty once the command closed its output before what is left counts as leftovers
 * (it ends at once when the tree is gone).
 */
const SETTLE_MS = 500

function stream(reader: SubprocessOutputReader | undefined): ForegroundValue['stdout'] {
  if (reader === undefined) return { text: '', cut: 0 }
  const read = reader.readFrom(0)
  const cut = read.lossy ? Math.max(0, read.nextOffset - Buffer.byteLength(read.text)) : 0
  return streamValue({ text: read.text, cut }, read.nextOffset)
}

/** `aborted`: the signal aborted the run (the tree is then stopped). */
export async function runInWorld(
  runtime: SubprocessRuntime, launch: Launch, timeoutMs: number, maxOutputBytes: number, signal: AbortSignal,
): Promise<ForegroundValue & { aborted: boolean }> {
  const stop = new AbortController()
  let timedOut = false
  const onAbort = () => stop.abort()
  signal.addEventListener('abort', onAbort, { once: true })
  const timer = setTimeout(() => { timedOut = true; stop.abort() }, timeoutMs)
  try {
    if (signal.aborted) stop.abort()
    const collect = { maxBytes: maxOutputBytes }
    const handle = spawnInWorld(runtime, launch, { stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs: GRACE_MS, signal: stop.signal })
    let outcome
    try {
      outcome = await handle.done
    } catch (error) {
      throw new HarnessError(`bash_bg: ctx.subprocess failed to run ${launch.argv[0]}: ${error instanceof Error ? error.message : String(error)}`, 'SPAWN_FAILED', { cause: error })
    }
    // Whatever of the tree outlived the command's output is stopped, as the local world stops leftovers; the seam counts no processes.
    let leftovers = 0
    if (!stop.signal.aborted && !await handle.waitForExit(AbortSignal.timeout(SETTLE_MS))) {
      leftovers = 1
      handle.terminate()
    }
    if (stop.signal.aborted || leftovers > 0) await handle.waitForExit()
    return {
      kind: 'foreground',
      exit_code: outcome.exitCode,
      signal: outcome.signal,
      timed_out: timedOut,
      timeout_ms: timeoutMs,
      stdout: stream(handle.collected.stdout),
      stderr: stream(handle.collected.stderr),
      leftovers_stopped: leftovers,
      output_held_open: false,
      world: 'subprocess',
      world_limits: worldLimits(GRACE_MS),
      aborted: signal.aborted,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
  }
}
