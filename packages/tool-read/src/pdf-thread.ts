/** One PDF parse off the host thread: a worker with a heap limit, a memory watch and a deadline, ended on abort, on dispose and when the call is done. */

import { Worker, type WorkerOptions } from 'node:worker_threads'
import { FsError } from '@deepseek-ai/dsh-fs'
import type { PdfReply, PdfRequest, PdfStart } from './pdf-protocol.ts'

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

function spawn(options: WorkerOptions): Worker {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return new Worker(new URL('./pdf-worker.js', here), options)
  // From the TypeScript source (tests run it so): the thread loads pdf-worker.ts through tsx.
  const entry = JSON.stringify(new URL('./pdf-worker.ts', here).href)
  return new Worker(`import('tsx/esm/api').then((api) => api.tsImport(${entry}, ${JSON.stringify(here)}))`, { ...options, eval: true })
}

export class PdfThread {
  /** Resolves with the page count once pdf.js has opened the file. */
  readonly opened: Promise<number>
  private readonly worker: Worker
  private pending: { resolve: (reply: PdfReply) => void, reject: (error: unknown) => void } | undefined
  private failed: unknown
  private readonly timers: NodeJS.Timeout[] = []
  private readonly onAbort = (): void => { this.fail(new FsError('read aborted', 'FS_ABORTED')) }

  constructor(data: Uint8Array, private readonly limits: PdfLimits, private readonly signal: AbortSignal, private readonly file: string) {
    // pdf.js takes ownership of (detaches) the buffer it is given: the thread gets a copy of its own.
    const copy = Uint8Array.from(data)
    const start: PdfStart = { data: copy }
    const rssAtStart = process.memoryUsage.rss()
    this.worker = spawn({ workerData: start, transferList: [copy.buffer], resourceLimits: { maxOldGenerationSizeMb: limits.memoryMB }, stdout: true, stderr: true })
    this.opened = this.next().then((reply) => {
      if (reply.type !== 'open') throw new PdfError('Error', 'no page count')
      return reply.total
    })
    this.worker.on('message', (reply: PdfReply) => {
      const pending = this.pending
      this.pending = undefined
      if (reply.type === 'error') pending?.reject(new PdfError(reply.name, reply.message))
      else pending?.resolve(reply)
    })
    this.worker.on('error', (error: Error & { code?: string }) => {
      this.fail(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? this.tooLarge() : this.crash(error.message))
    })
    this.worker.on('exit', (code) => { this.fail(this.crash(`exit code ${code}`)) })
    // pdf.js's console output is not the host's to print (its stdout may be what the model receives).
    this.worker.stdout.resume()
    this.worker.stderr.resume()
    const limit = limits.memoryMB * 1024 * 1024
    const watch = setInterval(() => { if (process.memoryUsage.rss() - rssAtStart > limit) this.fail(this.tooLarge()) }, WATCH_MS)
    const deadline = setTimeout(() => {
      this.fail(new FsError(`cannot read ${file}: the PDF took more than ${limits.timeoutMs} ms to parse (pdfTimeoutMs) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfTimeoutMs in tool-read's config`, 'FS_TOO_LARGE'))
    }, limits.timeoutMs)
    watch.unref()
    deadline.unref()
    this.timers.push(watch, deadline)
    if (signal.aborted) this.onAbort()
    else signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /** One page's text, at most `maxChars` of it. */
  async page(number: number, maxChars: number): Promise<string> {
    const request: PdfRequest = { number, maxChars }
    const reply = this.next()
    this.worker.postMessage(request)
    const answer = await reply
    if (answer.type !== 'page' || answer.number !== number) throw new PdfError('Error', `no text for page ${number}`)
    return answer.text
  }

  /** Ends the thread (idempotent): the call is done, aborted, failed or its plugin disposed. */
  end(): void {
    this.fail(new FsError('read aborted', 'FS_ABORTED'))
  }

  private next(): Promise<PdfReply> {
    if (this.failed !== undefined) return Promise.reject(this.failed)
    return new Promise((resolve, reject) => { this.pending = { resolve, reject } })
  }

  private tooLarge(): FsError {
    return new FsError(`cannot read ${this.file}: the PDF needs more than ${this.limits.memoryMB} MB to parse (pdfMemoryMB) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfMemoryMB in tool-read's config`, 'FS_TOO_LARGE')
  }

  private crash(why: string): FsError {
    return new FsError(`cannot read ${this.file}: the PDF parse thread failed (${why}) — try again, or convert the PDF to text first (e.g. pdftotext) and read that`, 'FS_IO_ERROR')
  }

  /** The first failure wins; the thread is ended at once (terminate interrupts running JavaScript). */
  private fail(error: unknown): void {
    if (this.failed !== undefined) return
    this.failed = error
    for (const timer of this.timers) clearTimeout(timer)
    this.signal.removeEventListener('abort', this.onAbort)
    void this.worker.terminate()
    const pending = this.pending
    this.pending = undefined
    pending?.reject(error)
  }
}
