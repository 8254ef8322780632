/** A foreground run in another execution world: one ctx.subprocess spawn in collect mode, stopped with the seam's terminate(). */
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { SubprocessOutputReader, SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import type { Launch } from '../contract.ts'
import { spawnInWorld } from './spawn.ts'

type Tail = { text: string, cut: number }

/** `world_limits`: what this world cannot promise; `leftovers_stopped` is 1 when something of the tree was left (the seam counts none). */
export interface SeamRun {
  exit_code: number | null
  signal: string | null
  timed_out: boolean
  timeout_ms: number
  stdout: Tail
  stderr: Tail
  leftovers_stopped: number
  output_held_open: false
  world_limits: string
  aborted: boolean
}

/** `graceMs`: the seam's TERM→KILL grace at a timeout or abort; `settleMs`: how long the tree may outlive the output. */
export interface SeamRunOptions {
  toolName: string
  timeoutMs: number
  maxOutputBytes: number
  signal: AbortSignal
  marks: Readonly<Record<string, string>>
  graceMs: number
  settleMs: number
  limits: string
}

function tail(reader: SubprocessOutputReader | undefined): Tail {
  if (reader === undefined) return { text: '', cut: 0 }
  const read = reader.readFrom(0)
  return { text: read.text, cut: read.lossy ? Math.max(0, read.nextOffset - Buffer.byteLength(read.text)) : 0 }
}

export async function runInSeam(runtime: SubprocessRuntime, launch: Launch, options: SeamRunOptions): Promise<SeamRun> {
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
      output_held_open: false,
      world_limits: options.limits,
      aborted: signal.aborted,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
  }
}
