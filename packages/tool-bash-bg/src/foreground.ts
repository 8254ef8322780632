// A foreground run in its own process group: the tail of each stream; its processes stopped at the timeout, on abort,
// and when the leader leaves any behind. Output held open by a process the tracking cannot see gets PIPE_GRACE_MS.
import { randomBytes } from 'node:crypto'
import { closed, type Launch } from './launch.ts'
import { streamValue } from './output-stream.ts'
import { SHELL_MARK } from './proc-census.ts'
import type { ForegroundValue } from './render.ts'
import type { KillOutcome, ShellWorld } from './shell-processes.ts'

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
    return streamValue({ text: buffer.toString('utf8'), cut: this.total - buffer.length }, this.total)
  }
}

/** `aborted`: the signal aborted the run (the group is then stopped). */
export async function runForeground(
  world: ShellWorld, launch: Launch, timeoutMs: number, maxOutputBytes: number, signal: AbortSignal,
): Promise<ForegroundValue & { aborted: boolean }> {
  // Marked like a background shell, so a leftover that left the group is still found (where no cgroup holds it).
  const child = world.start(launch, { [SHELL_MARK]: `fg-${randomBytes(4).toString('hex')}` })
  const group = child.processes
  const stdout = new Tail(maxOutputBytes)
  const stderr = new Tail(maxOutputBytes)
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  const pipes = [child.stdout, child.stderr]
  let timedOut = false
  let stopping: Promise<KillOutcome> | undefined
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
    // The output normally closes with the group; once the group is empty, what is left of the command left the group.
    const groupEmpty = group.whenGroupEmpty?.() ?? group.whenEmpty(Number.POSITIVE_INFINITY)
    await Promise.race([allClosed, groupEmpty, stopped.then(() => stopping)])
    // Leftovers (a `setsid server &` included: it is still a member) are stopped; their hold on the output goes with them.
    const leftovers = stopping === undefined ? group.census().length : 0
    if (leftovers > 0) stop()
    // What outlived even SIGKILL (stuck in the kernel) is named: it keeps running.
    const survivors = (await stopping)?.survivors ?? []
    // Only a process the tracking could not see still holds the pipes now.
    const heldOpen = !pipesClosed && !await closed(pipes, PIPE_GRACE_MS)
    if (heldOpen) for (const pipe of pipes) pipe.destroy()
    return {
      kind: 'foreground',
      exit_code: exit.code,
      signal: exit.signal,
      timed_out: timedOut,
      timeout_ms: timeoutMs,
      stdout: stdout.result(),
      stderr: stderr.result(),
      leftovers_stopped: leftovers,
      ...leftovers > 0 && survivors.length > 0 ? { leftovers_running: survivors } : {},
      output_held_open: heldOpen,
      aborted: signal.aborted,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', stop)
  }
}
