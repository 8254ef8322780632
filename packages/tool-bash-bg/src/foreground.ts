/**
 * Foreground run: spawn in a new process group, keep the tail of each stream (bounded), and
 * end the whole group at the timeout or on abort. The call is over when the leader exited and
 * its output closed; anything of the group still alive then is stopped, so a foreground call
 * never leaves orphans behind. A process that left the group (setsid) may hold the output open
 * for ever: once the group is empty, or the timeout or abort has stopped it, the pipes get
 * PIPE_GRACE_MS more to close, then they are destroyed and the result says so.
 */
import { spawn } from 'node:child_process'
import type { Readable } from 'node:stream'
import { ProcessGroup } from './group.ts'
import type { Launch } from './launch.ts'
import { spawnFailed } from './launch.ts'
import { terminateGroup } from './terminate.ts'

/** SIGTERM grace at a timeout or abort before SIGKILL. */
const GRACE_MS = 2000
/** How long the output may stay open once nothing of the group is left to write it. */
const PIPE_GRACE_MS = 1000

interface StreamTail {
  text: string
  /** Bytes cut from the start of the stream (0 when everything is shown). */
  cut: number
}

export interface ForegroundResult {
  exit_code: number | null
  signal: string | null
  timed_out: boolean
  aborted: boolean
  stdout: StreamTail
  stderr: StreamTail
  /** Processes of the group still alive after the leader ended, which the call stopped. */
  leftovers_stopped: number
  /** True when something outside the group (setsid) still held the output open and the call stopped reading it. */
  output_held_open: boolean
}

/** Keeps the last `max` bytes of a stream, decoded at a character boundary. */
class Tail {
  private chunks: Buffer[] = []
  private kept = 0
  total = 0
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
    if (buffer.length < this.total) {
      // A cut start may fall inside a UTF-8 sequence: skip its continuation bytes.
      let start = 0
      while (start < 3 && ((buffer[start] ?? 0) & 0xC0) === 0x80) start++
      buffer = buffer.subarray(start)
    }
    return { text: buffer.toString('utf8'), cut: this.total - buffer.length }
  }
}

function closed(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.readableEnded) resolve()
    else stream.once('close', () => resolve())
  })
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Resolves once the group (its leader reaped) is empty, or when `over()` says to stop looking. */
async function emptied(group: ProcessGroup, over: () => boolean): Promise<void> {
  let interval = 5
  while (!over() && group.members().length > 0) {
    await sleep(interval)
    interval = Math.min(interval * 2, 100)
  }
}

export async function runForeground(
  launch: Launch, timeoutMs: number, maxOutputBytes: number, signal: AbortSignal,
): Promise<ForegroundResult> {
  const [program, ...args] = launch.argv
  // Listen before the first await: an abort while the process starts must not be lost.
  let aborted = signal.aborted
  let onStarted: (() => void) | undefined
  const onAbort = () => { aborted = true; onStarted?.() }
  signal.addEventListener('abort', onAbort, { once: true })
  let timer: NodeJS.Timeout | undefined
  try {
    const child = spawn(program, args, { cwd: launch.cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', (error) => reject(spawnFailed(program, error)))
    })
    const group = new ProcessGroup(child)
    const stdout = new Tail(maxOutputBytes)
    const stderr = new Tail(maxOutputBytes)
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk))
    const pipes = [child.stdout, child.stderr].filter((stream): stream is Readable => stream !== null)
    let timedOut = false
    let stopping: Promise<unknown> | undefined
    let stopRequested: (() => void) | undefined
    const stopped = new Promise<void>((resolve) => { stopRequested = resolve })
    const stop = () => {
      if (stopping !== undefined) return
      stopping = terminateGroup(group, { signal: 'SIGTERM', force: true, timeoutMs: GRACE_MS })
      stopRequested?.()
    }
    onStarted = stop
    if (aborted) stop()
    timer = setTimeout(() => { timedOut = true; stop() }, timeoutMs)

    let pipesClosed = false
    const allClosed = Promise.all(pipes.map(closed)).then(() => { pipesClosed = true })
    const exit = await group.exited
    // The output normally closes with the group. Stop waiting for it once nothing of the
    // group is left (a process outside it holds the pipes) or the timeout/abort stopped it.
    let waited = false
    await Promise.race([allClosed, emptied(group, () => pipesClosed || waited), stopped.then(() => stopping)])
    waited = true
    let heldOpen = false
    if (!pipesClosed) {
      let grace: NodeJS.Timeout | undefined
      await Promise.race([allClosed, new Promise((resolve) => { grace = setTimeout(resolve, PIPE_GRACE_MS) })])
      clearTimeout(grace)
      if (!pipesClosed) {
        heldOpen = true
        for (const pipe of pipes) pipe.destroy()
      }
    }
    let leftovers = 0
    if (stopping === undefined && group.members().length > 0) {
      leftovers = group.members().length
      stop()
    }
    await stopping
    return {
      exit_code: exit.code,
      signal: exit.signal,
      timed_out: timedOut,
      aborted,
      stdout: stdout.result(),
      stderr: stderr.result(),
      leftovers_stopped: leftovers,
      output_held_open: heldOpen,
    }
  } finally {
    clearTimeout(timer)
    signal.removeEventListener('abort', onAbort)
  }
}
