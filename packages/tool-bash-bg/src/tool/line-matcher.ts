/**
 * A pattern tested against lines on a thread of its own (match-worker.ts), so no pattern and no line can hold the
 * host's thread: re2js is linear in the line but its cost per character grows with the compiled program (a
 * 37-character pattern of counted repetitions costs about 0.3 s per 4 KB line). Used by wait_for (the first match)
 * and watch (`every`: each matching line, with what the caller noted of it, `T`).
 */
import type { Worker } from 'node:worker_threads'
import { startWorker } from '@gencode-ai/dsh-tool-common'
import type { LinePattern } from './line-pattern.ts'
import type { MatchAnswer, MatchBatch, MatchSetup } from './match-protocol.ts'

/** Characters sent to the thread and not yet answered, at most: a thread that falls behind costs bounded memory. */
const MAX_BACKLOG = 1024 * 1024
/** About how many characters one message carries. */
const BATCH_CHARS = 64 * 1024
/** What a line costs besides its characters, so a flood of empty lines is bounded too. */
const LINE_COST = 16
/** The thread's heap: batches within the backlog, and re2js's bounded state cache. */
const THREAD_HEAP_MB = 128

export interface MatchEvents<T> {
  match(line: string, noted: T): void
  /** The thread failed (it could not start, or ran out of memory): no later line is tested. */
  fail(error: Error): void
  /** A line not tested: it came while the thread was MAX_BACKLOG behind. */
  untested?(line: string, noted: T): void
}

export class LineMatcher<T = undefined> {
  /** Lines never tested: they came while the thread was MAX_BACKLOG characters behind. */
  untested = 0
  private readonly worker: Worker
  private batch: string[] = []
  private notes: T[] = []
  private batchChars = 0
  /** Each batch sent and not yet answered, oldest first: its cost in characters, its lines and their notes. */
  private readonly sent: { chars: number, lines: string[], notes: T[] }[] = []
  private backlog = 0
  private idle: (() => void)[] = []
  private closed = false

  constructor(pattern: LinePattern, every: boolean, private readonly events: MatchEvents<T>) {
    const setup: MatchSetup = { source: pattern.source, every }
    // Its console is not the host's to print on (the host's stdout may be a protocol).
    this.worker = startWorker(import.meta.url, 'match-worker', {
      workerData: setup, resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB }, stdout: true, stderr: true,
    })
    this.worker.stdout.resume()
    this.worker.stderr.resume()
    // A wait holds its own timer; the thread alone must not keep the host alive.
    this.worker.unref()
    this.worker.on('message', (answer: MatchAnswer) => this.answered(answer))
    this.worker.on('error', (error: Error & { code?: string }) => {
      this.fail(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new Error(`it ran out of its ${THREAD_HEAP_MB} MB`) : error)
    })
    this.worker.on('exit', (code) => this.fail(new Error(`it exited (code ${code})`)))
  }

  /** Queues a whole line; it is sent with its batch, at the next `flush` or once the batch is full. */
  push(line: string, noted = undefined as T): void {
    if (this.closed) return
    const cost = line.length + LINE_COST
    if (this.backlog + this.batchChars + cost > MAX_BACKLOG) {
      this.untested++
      this.events.untested?.(line, noted)
      return
    }
    this.batch.push(line)
    this.notes.push(noted)
    this.batchChars += cost
    if (this.batchChars >= BATCH_CHARS) this.flush()
  }

  flush(): void {
    if (this.closed || this.batch.length === 0) return
    this.worker.postMessage({ lines: this.batch } satisfies MatchBatch, [])
    this.sent.push({ chars: this.batchChars, lines: this.batch, notes: this.notes })
    this.backlog += this.batchChars
    this.batch = []
    this.notes = []
    this.batchChars = 0
  }

  /** Resolves once every line pushed so far is answered (at once when the matcher is closed). */
  drained(): Promise<void> {
    this.flush()
    if (this.closed || this.sent.length === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  /** Ends the thread, even in the middle of a line: terminate interrupts running JavaScript. */
  close(): void {
    if (this.closed) return
    this.closed = true
    void this.worker.terminate()
    this.wake()
  }

  private answered(answer: MatchAnswer): void {
    const batch = this.sent.shift()
    if (batch === undefined) return
    this.backlog -= batch.chars
    for (const index of answer.matched) {
      if (!this.closed) this.events.match(batch.lines[index] ?? '', batch.notes[index] as T)
    }
    if (this.sent.length === 0) this.wake()
  }

  private fail(error: Error): void {
    if (this.closed) return
    this.close()
    this.events.fail(error)
  }

  private wake(): void {
    const idle = this.idle
    this.idle = []
    for (const resolve of idle) resolve()
  }
}
