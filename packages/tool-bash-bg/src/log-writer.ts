/**
 * The capped log of one background shell. stdout and stderr are appended in arrival order to
 * one file created 0600. At `maxBytes` capture stops: a one-line marker closes the file at
 * exactly the cap, later output is counted and discarded, and the pipes keep being drained so
 * the writer never blocks on a full pipe. Before the cap, a slow disk pauses the pipes
 * (ordinary backpressure) instead of buffering without bound.
 */
import { closeSync, constants, openSync, writev } from 'node:fs'
import type { Readable } from 'node:stream'

/** Queued bytes above which the pipes are paused until the disk catches up. */
const HIGH_WATER = 4 * 1024 * 1024

export function capMarker(maxBytes: number): string {
  return `\n[bash_bg: log capped at ${maxBytes} bytes; later output was discarded]\n`
}

export class LogWriter {
  /** Bytes accepted into the log (written or queued), marker included. */
  bytes = 0
  /** Bytes known to be on disk: readers never look past this. */
  flushed = 0
  /** Output discarded after the cap. */
  dropped = 0
  capped = false
  private readonly fd: number
  private readonly marker: Buffer
  private queue: Buffer[] = []
  private queued = 0
  private writing = false
  private paused = false
  private closed = false
  private error: Error | undefined
  private readonly sources: Readable[] = []
  private idle: (() => void) | undefined

  constructor(readonly path: string, private readonly maxBytes: number) {
    // O_EXCL: a log is always a new file of ours, never someone else's file at a guessed path.
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600)
    this.marker = Buffer.from(capMarker(maxBytes))
  }

  /** Capture a stream into the log; it is drained to its end even after the cap. */
  attach(stream: Readable): void {
    this.sources.push(stream)
    stream.on('data', (chunk: Buffer) => this.push(chunk))
  }

  private push(chunk: Buffer): void {
    if (this.capped || this.closed) {
      this.dropped += chunk.length
      return
    }
    const room = this.maxBytes - this.marker.length - this.bytes
    if (chunk.length <= room) {
      this.enqueue(chunk)
      return
    }
    if (room > 0) this.enqueue(chunk.subarray(0, room))
    this.dropped += chunk.length - Math.max(room, 0)
    this.capped = true
    // A cap smaller than the marker keeps only as much of the marker as fits.
    this.enqueue(this.marker.subarray(0, Math.max(0, this.maxBytes - this.bytes)))
    if (this.paused) this.resume()
  }

  private enqueue(buffer: Buffer): void {
    if (buffer.length === 0) return
    this.queue.push(buffer)
    this.queued += buffer.length
    this.bytes += buffer.length
    if (this.queued > HIGH_WATER && !this.capped && !this.paused) {
      this.paused = true
      for (const source of this.sources) source.pause()
    }
    this.flush()
  }

  private resume(): void {
    this.paused = false
    for (const source of this.sources) source.resume()
  }

  private flush(): void {
    if (this.writing || this.queue.length === 0) {
      if (!this.writing && this.queue.length === 0) this.idle?.()
      return
    }
    const batch = this.queue
    const size = this.queued
    this.queue = []
    this.queued = 0
    this.writing = true
    writev(this.fd, batch, (error) => {
      this.writing = false
      if (error !== null) {
        // A failing disk stops capture like the cap does; the shell itself keeps running.
        this.error ??= error
        this.capped = true
        this.queue = []
        this.queued = 0
      } else {
        this.flushed += size
      }
      if (this.paused && this.queued < HIGH_WATER / 2) this.resume()
      this.flush()
    })
  }

  /** Why capture stopped early because of the disk, if it did. */
  get writeError(): Error | undefined {
    return this.error
  }

  /** Flush what is queued and close the file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    if (this.writing || this.queue.length > 0) {
      await new Promise<void>((resolve) => {
        this.idle = resolve
        this.flush()
      })
    }
    closeSync(this.fd)
  }
}
