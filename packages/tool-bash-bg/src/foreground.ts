/**
 * A foreground run: a new process group, the tail of each stream, the group ended at the timeout or
 * on abort, and what is left of it when the leader exits. A process that left the group (setsid) may
 * hold the output open for ever: it gets PIPE_GRACE_MS, then the pipes are destroyed and the result says so.
 */
import { ProcessGroup } from './group.ts'
import { closed, spawnGroup, type Launch } from './launch.ts'
import type { ForegroundValue } from './render.ts'

/** SIGTERM grace at a timeout or abort before SIGKILL. */
const GRACE_MS = 2000
/** How long the output may stay open once nothing of the group is left to write it. */
const PIPE_GRACE_MS = 1000

/** Keeps the last `max` bytes of a stream, decoded at a character boundary. */
class Tail {
  private chunks: Buffer[] = []
  private kept = 0
  private total = 0
  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    this.total += chunk.length
    this.chunks.push(chunk)
    this.kept += chunk.length
    while (this.chunks.length > 1 && this.kept - (this.chunks[0]?.length ?? 0) >= this.max) {
      this.kept -= this.chunks.shift()?.length ?? 0
    }
  }

  result(): ForegroundValue['stdout'] {
    let buffer = Buffer.concat(this.chunks)
    if (buffer.length > this.max) buffer = buffer.subarray(buffer.length - this.max)
    // A cut start may fall inside a UTF-8 sequence: skip its continuation bytes.
    let start = 0
    while (buffer.length < this.total && start < 3 && ((buffer[start] ?? 0) & 0xC0) === 0x80) start++
    buffer = buffer.subarray(start)
    return { text: buffer.toString('utf8'), cut: this.total - buffer.length }
  }
}

/** Resolves once the group (its leader reaped) is empty, or when `over()` says to stop looking. */
async function emptied(group: ProcessGroup, over: () => boolean): Promise<void> {
  for (let interval = 5; !over() && group.members().length > 0; interval = Math.min(interval * 2, 100)) {
    await new Promise((resolve) => setTimeout(resolve, interval))
  }
}

/** `aborted`: the signal aborted the run (the group is then stopped). */
export async function runForeground(
  launch: Launch, timeoutMs: number, maxOutputBytes: number, signal: AbortSignal,
): Promise<ForegroundValue & { aborted: boolean }> {
  const child = spawnGroup(launch)
  const group = new ProcessGroup(child)
  const stdout = new Tail(maxOutputBytes)
  const stderr = new Tail(maxOutputBytes)
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  const pipes = [child.stdout, child.stderr]
  let timedOut = false
  let stopping: Promise<unknown> | undefined
  let onStop: (() => void) | undefined
  const stopped = new Promise<void>((resolve) => { onStop = resolve })
  const stop = () => {
    stopping ??= group.terminate({ signal: 'SIGTERM', force: true, timeoutMs: GRACE_MS })
    onStop?.()
  }
  signal.addEventListener('abort', stop, { once: true })
  if (signal.aborted) stop()
  const timer = setTimeout(() => { timedOut = true; stop() }, timeoutMs)
  try {
    let pipesClosed = false
    const allClosed = closed(pipes).then(() => { pipesClosed = true })
    const exit = await group.exited
    // The output normally closes with the group. Stop waiting for it once nothing of the
    // group is left (a process outside it holds the pipes) or the timeout/abort stopped it.
    let waited = false
    await Promise.race([allClosed, emptied(group, () => pipesClosed || waited), stopped.then(() => stopping)])
    waited = true
    const heldOpen = !pipesClosed && !await closed(pipes, PIPE_GRACE_MS)
    if (heldOpen) for (const pipe of pipes) pipe.destroy()
    const leftovers = stopping === undefined ? group.members().length : 0
    if (leftovers > 0) stop()
    await stopping
    return {
      kind: 'foreground',
      exit_code: exit.code,
      signal: exit.signal,
      timed_out: timedOut,
      timeout_ms: timeoutMs,
      stdout: stdout.result(),
      stderr: stderr.result(),
      leftovers_stopped: leftovers,
      output_held_open: heldOpen,
      aborted: signal.aborted,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', stop)
  }
}
