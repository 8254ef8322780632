// A shell's capped log: both streams in arrival order, one new 0600 file; at the cap (or a disk error) a marker
// ends it and later output is drained. Sync writes: about 3x faster than queued async ones (bench/bash-bg).
import { closeSync, constants, openSync, writeSync } from 'node:fs'
import type { Readable } from 'node:stream'

export class LogWriter {
  bytes = 0
  capped = false
  /** The disk error that stopped capture (the log is then incomplete). */
  failure: string | undefined
  lastOutputAt: number | undefined
  readonly watchers = new Set<(written: Buffer) => void>()
  private fd: number | undefined
  private readonly marker: Buffer

  constructor(readonly path: string, private readonly maxBytes: number) {
    // O_EXCL: a log is always a new file of ours, never someone else's file at a guessed path.
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600)
    this.marker = Buffer.from(`\n[bash_bg: log capped at ${maxBytes} bytes; later output was discarded]\n`)
  }

  /** Drained to its end even after the cap. */
  attach(stream: Readable): void {
    stream.on('data', (chunk: Buffer) => this.push(chunk))
  }

  private push(chunk: Buffer): void {
    if (this.capped || this.fd === undefined) return
    const room = this.maxBytes - this.marker.length - this.bytes
    if (chunk.length <= room) {
      this.write(chunk)
      return
    }
    if (room > 0) this.write(chunk.subarray(0, room))
    // A cap smaller than the marker keeps only as much of the marker as fits.
    this.write(this.marker.subarray(0, Math.max(0, this.maxBytes - this.bytes)))
    this.capped = true
  }

  private write(buffer: Buffer): void {
    if (this.fd === undefined || buffer.length === 0) return
    try {
      let offset = 0
      while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset)
      this.bytes += buffer.length
      this.lastOutputAt = Date.now()
      for (const watcher of this.watchers) watcher(buffer)
    } catch (error) {
      this.capped = true
      this.failure = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
