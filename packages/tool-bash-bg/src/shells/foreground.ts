// A foreground run of a world that counts its processes: the tail of each stream; its processes stopped at the
// timeout, on abort, and when the leader leaves any behind. Output held open by a process the tracking cannot see
// gets the kill policy's pipe grace.
import type { Readable } from 'node:stream'
import type { KillOutcome } from '../contract.ts'
import { KILL_POLICY } from './kill-policy.ts'
import { streamValue } from './output-stream.ts'
import type { RunOptions, RunResult, StartedCommand, StreamTail } from './world-types.ts'

/** True once every stream closed; false after `ms`, when given. */
export function closed(streams: readonly Readable[], ms?: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = ms === undefined ? undefined : setTimeout(() => resolve(false), ms).unref()
    void Promise.all(streams.map((stream) => new Promise((done) => {
      if (stream.destroyed || stream.readableEnded) done(undefined)
      else stream.once('close', done)
    }))).then(() => { clearTimeout(timer); resolve(true) })
  })
}

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

  result(): StreamTail {
    let buffer = Buffer.concat(this.chunks)
    if (buffer.length > this.max) buffer = buffer.subarray(buffer.length - this.max)
    // A cut start may fall inside a UTF-8 sequence: skip its continuation bytes.
    let start = 0
    while (buffer.length < this.total && start < 3 && ((buffer[start] ?? 0) & 0xC0) === 0x80) start++
    buffer = buffer.subarray(start)
    return streamValue({ text: buffer.toString('utf8'), cut: this.total - buffer.length }, this.total)
  }
}

/** `move`: at the timeout the command may move to the background instead of being stopped (then it runs on, in the shell's hands). */
export async function runForeground(child: StartedCommand, { timeoutMs, maxOutputBytes, signal, move }: RunOptions): Promise<RunResult> {
  const group = child.processes
  const stdout = new Tail(maxOutputBytes)
  const stderr = new Tail(maxOutputBytes)
  move?.attach(child)
  const onStdout = (chunk: Buffer) => stdout.push(chunk)
  const onStderr = (chunk: Buffer) => stderr.push(chunk)
  child.stdout.on('data', onStdout)
  child.stderr.on('data', onStderr)
  const pipes = [child.stdout, child.stderr]
  let timedOut = false
  let stopping: Promise<KillOutcome> | undefined
  let onStop: (() => void) | undefined
  const stopped = new Promise<void>((resolve) => { onStop = resolve })
  const stop = () => {
    stopping ??= group.terminate({ signal: 'SIGTERM', force: true, timeoutMs: KILL_POLICY.runGraceMs })
    onStop?.()
  }
  signal.addEventListener('abort', stop, { once: true })
  if (signal.aborted) stop()
  let moved: (() => void) | undefined
  const movedAway = new Promise<'moved'>((resolve) => { moved = () => resolve('moved') })
  let notMoved: string | undefined
  const timer = setTimeout(() => {
    notMoved = move?.move(child)
    if (move !== undefined && notMoved === undefined) moved?.()
    else {
      timedOut = true
      stop()
    }
  }, timeoutMs)
  let away = false
  try {
    let pipesClosed = false
    const allClosed = closed(pipes).then(() => { pipesClosed = true })
    const exit = await Promise.race([group.exited, movedAway])
    if (exit === 'moved') {
      away = true
      child.stdout.off('data', onStdout)
      child.stderr.off('data', onStderr)
      return {
        exit_code: null, signal: null, timed_out: true, timeout_ms: timeoutMs, stdout: stdout.result(), stderr: stderr.result(),
        leftovers_stopped: 0, output_held_open: false, aborted: false, moved: true,
      }
    }
    // The output normally closes with the group; once the group is empty, what is left of the command left the group.
    const groupEmpty = group.whenGroupEmpty?.() ?? group.whenEmpty(Number.POSITIVE_INFINITY)
    await Promise.race([allClosed, groupEmpty, stopped.then(() => stopping)])
    // Leftovers (a `setsid server &` included: it is still a member) are stopped; their hold on the output goes with them.
    const leftovers = stopping === undefined ? group.census().length : 0
    if (leftovers > 0) stop()
    // What outlived even SIGKILL (stuck in the kernel) is named: it keeps running.
    const survivors = (await stopping)?.survivors ?? []
    // Only a process the tracking could not see still holds the pipes now.
    const heldOpen = !pipesClosed && !await closed(pipes, KILL_POLICY.pipeGraceMs)
    if (heldOpen) for (const pipe of pipes) pipe.destroy()
    return {
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
      ...notMoved === undefined ? {} : { not_moved: notMoved },
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', stop)
    if (!away) move?.discard()
  }
}
