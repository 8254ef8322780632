/** PDF parses off the host thread: workers with a heap limit, one kept warm; each call under a memory watch and a deadline. */

import { Worker, type WorkerOptions } from 'node:worker_threads'
import { FsError } from '@deepseek-ai/dsh-fs'
import { fsAborted, startWorker } from '@gencode-ai/dsh-tool-common'
import type { PdfReply, PdfRequest } from './protocol.ts'

export interface PdfLimits {
  /** The parse's memory: the worker's JS heap, and the process's resident growth while it runs (decoded streams live outside the heap). */
  memoryMB: number
  /** The whole call: opening the file and every page asked for. */
  timeoutMs: number
}

/** A failure pdf.js reported (its exception's name and message), as opposed to a limit or an abort. */
export class PdfError extends Error {
  constructor(readonly pdfName: string, message: string) {
    super(message)
    this.name = 'PdfError'
  }
}

const WATCH_MS = 20
const CLOSE_GRACE_MS = 500
/** A worker that grew the process by more than this during its call is ended, not kept warm. */
const REUSE_GROWTH = 128 * 1024 * 1024

const spawn = (options: WorkerOptions): Worker => startWorker(import.meta.url, 'pdf-worker', options)

/** One worker: a request, its reply; the first failure ends it for good. */
class ParseThread {
  failed: unknown
  /** Resolves once pdf.js is loaded: what a parse uses is measured from then. */
  readonly ready: Promise<void>
  private loaded = (): void => {}
  private readonly worker: Worker
  private pending: { resolve: (reply: PdfReply) => void, reject: (error: unknown) => void } | undefined
  /** Who to blame for a failure the worker reports itself ('memory' for a heap overflow, else what went wrong). */
  blame: (why: string) => unknown = (why) => new Error(why)

  constructor(memoryMB: number) {
    this.worker = spawn({ resourceLimits: { maxOldGenerationSizeMb: memoryMB }, stdout: true, stderr: true })
    this.ready = new Promise((resolve) => { this.loaded = resolve })
    this.worker.on('message', (reply: PdfReply) => {
      if (reply.type === 'ready') {
        this.loaded()
        return
      }
      const pending = this.pending
      this.pending = undefined
      if (reply.type === 'error') pending?.reject(new PdfError(reply.name, reply.message))
      else pending?.resolve(reply)
    })
    this.worker.on('error', (error: Error & { code?: string }) => {
      this.fail(this.blame(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'memory' : error.message))
    })
    this.worker.on('exit', (code) => { this.fail(this.blame(`exit code ${code}`)) })
    // pdf.js's console output is not the host's to print (its stdout may be what the model receives).
    this.worker.stdout.resume()
    this.worker.stderr.resume()
  }

  request(request: PdfRequest, transfer: ArrayBuffer[] = []): Promise<PdfReply> {
    if (this.failed !== undefined) return Promise.reject(this.failed)
    const reply = new Promise<PdfReply>((resolve, reject) => { this.pending = { resolve, reject } })
    this.worker.postMessage(request, transfer)
    return reply
  }

  /** Idle, it must not keep the host alive. */
  hold(held: boolean): void {
    if (held) this.worker.ref()
    else this.worker.unref()
  }

  /** Terminate interrupts running JavaScript, so a parse stuck in a loop ends too. */
  fail(error: unknown): void {
    if (this.failed !== undefined) return
    this.failed = error
    void this.worker.terminate()
    const pending = this.pending
    this.pending = undefined
    pending?.reject(error)
  }
}

/** The warm worker of one plugin instance (unpdf's load costs about 100 ms a call otherwise), ended when the plugin is disposed. */
export class PdfPool {
  private idle: ParseThread | undefined
  private memoryMB = 0
  private readonly busy = new Set<ParseThread>()

  take(memoryMB: number): ParseThread {
    const idle = this.idle
    this.idle = undefined
    let thread = idle
    if (idle === undefined || idle.failed !== undefined || this.memoryMB !== memoryMB) {
      idle?.fail(new Error('replaced'))
      this.memoryMB = memoryMB
      thread = new ParseThread(memoryMB)
    }
    thread = thread ?? new ParseThread(memoryMB)
    thread.hold(true)
    this.busy.add(thread)
    return thread
  }

  give(thread: ParseThread): void {
    this.busy.delete(thread)
    if (this.idle !== undefined || thread.failed !== undefined) {
      thread.fail(new Error('not kept'))
      return
    }
    thread.hold(false)
    this.idle = thread
  }

  /** The plugin is disposed: parses in flight end as aborted reads. */
  close(): void {
    this.idle?.fail(new Error('disposed'))
    this.idle = undefined
    for (const thread of this.busy) thread.fail(fsAborted('read'))
    this.busy.clear()
  }
}

/** One call's parse of one file. */
export class PdfParse {
  /** Resolves with the page count once pdf.js has opened the file. */
  readonly opened: Promise<number>
  private readonly thread: ParseThread
  private readonly timers: NodeJS.Timeout[] = []
  /** Resident size once the thread is loaded. */
  private rssAtStart: number | undefined
  private done = false
  private readonly onAbort = (): void => { this.thread.fail(fsAborted('read')) }

  constructor(
    private readonly pool: PdfPool, data: Uint8Array, private readonly limits: PdfLimits,
    private readonly signal: AbortSignal, private readonly file: string,
  ) {
    this.thread = pool.take(limits.memoryMB)
    this.thread.blame = (why) => why === 'memory' ? this.tooLarge() : this.crash(why)
    // Memory and time are counted from the moment the thread is loaded: its own start-up is not the file's doing.
    void this.thread.ready.then(() => {
      if (this.done) return
      this.rssAtStart = process.memoryUsage.rss()
      const limit = limits.memoryMB * 1024 * 1024
      const watch = setInterval(() => {
        if (process.memoryUsage.rss() - (this.rssAtStart ?? 0) > limit) this.thread.fail(this.tooLarge())
      }, WATCH_MS)
      const deadline = setTimeout(() => {
        this.thread.fail(new FsError(`cannot read ${file}: the PDF took more than ${limits.timeoutMs} ms to parse (pdfTimeoutMs) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfTimeoutMs in tool-read's config`, 'FS_TOO_LARGE'))
      }, limits.timeoutMs)
      watch.unref()
      deadline.unref()
      this.timers.push(watch, deadline)
    })
    if (signal.aborted) this.onAbort()
    else signal.addEventListener('abort', this.onAbort, { once: true })
    // pdf.js takes ownership of (detaches) the buffer it is given: the thread gets a copy of its own.
    const copy = Uint8Array.from(data)
    this.opened = this.thread.request({ type: 'open', data: copy }, [copy.buffer]).then((reply) => {
      if (reply.type !== 'open') throw new PdfError('Error', 'no page count')
      return reply.total
    })
  }

  /** One page's text, at most `maxChars` of it. */
  async page(number: number, maxChars: number): Promise<string> {
    const reply = await this.thread.request({ type: 'page', number, maxChars })
    if (reply.type !== 'page' || reply.number !== number) throw new PdfError('Error', `no text for page ${number}`)
    return reply.text
  }

  /** The call is done (or its plugin disposed): a healthy, small worker closes the document and stays warm; any other is ended. */
  async end(keep: boolean): Promise<void> {
    if (this.done) return
    this.done = true
    this.signal.removeEventListener('abort', this.onAbort)
    for (const timer of this.timers) clearTimeout(timer)
    const small = this.rssAtStart !== undefined && process.memoryUsage.rss() - this.rssAtStart < REUSE_GROWTH
    if (keep && small && this.thread.failed === undefined) {
      // A page cut short may leave pdf.js still parsing it: a worker that does not close promptly is ended.
      let grace: NodeJS.Timeout | undefined
      const late = new Promise<boolean>((resolve) => { grace = setTimeout(resolve, CLOSE_GRACE_MS, false) })
      const closed = await Promise.race([this.thread.request({ type: 'close' }).then(() => true, () => false), late])
      clearTimeout(grace)
      if (closed) {
        this.pool.give(this.thread)
        return
      }
    }
    this.thread.fail(fsAborted('read'))
    this.pool.give(this.thread)
  }

  private tooLarge(): FsError {
    return new FsError(`cannot read ${this.file}: the PDF needs more than ${this.limits.memoryMB} MB to parse (pdfMemoryMB) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfMemoryMB in tool-read's config`, 'FS_TOO_LARGE')
  }

  private crash(why: string): FsError {
    return new FsError(`cannot read ${this.file}: the PDF parse thread failed (${why}) — try again, or convert the PDF to text first (e.g. pdftotext) and read that`, 'FS_IO_ERROR')
  }
}
