// A shell's capped log: both streams in arrival order, one new 0600 file; at the cap (or a disk error) a marker
// ends it and later output is drained. Sync writes: about 3x faster than queued async ones (bench/bash-bg).
import { closeSync, constants, fstatSync, lstatSync, openSync, writeSync } from 'node:fs'
import type { Readable } from 'node:stream'

/** Which of the command's streams a piece of the log came from. */
export type StreamName = 'stdout' | 'stderr'

/** Told each piece as written, with its stream (the cap's marker comes with the stream whose piece reached the cap). */
export type LogWatcher = (written: Buffer, stream: StreamName) => void

export class LogWriter {
  bytes = 0
  capped = false
  /** The disk error that stopped capture (the log is then incomplete). */
  failure: string | undefined
  lastOutputAt: number | undefined
  readonly watchers = new Set<LogWatcher>()
  /** Told once, when the log stops taking output (the cap, or a write error). */
  readonly enders = new Set<() => void>()
  private fd: number | undefined
  private readonly marker: Buffer
  /** With `streams`: per stream, runs of [log offset, stream offset, length], in order (adjacent writes joined). */
  private readonly runs: Record<StreamName, number[]> | undefined
  private readonly streamBytes = { stdout: 0, stderr: 0 }

  /** `toolName`: the name the cap's marker gives; `streams`: keep where each stream's bytes lie. */
  constructor(readonly path: string, private readonly maxBytes: number, toolName: string, streams = false) {
    this.runs = streams ? { stdout: [], stderr: [] } : undefined
    // O_EXCL: a log is always a new file of ours, never someone else's file at a guessed path.
    this.fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND, 0o600)
    this.marker = Buffer.from(`\n[${toolName}: log capped at ${maxBytes} bytes; later output was discarded]\n`)
  }

  /** Drained to its end even after the cap. */
  attach(stream: Readable, name: StreamName): void {
    stream.on('data', (chunk: Buffer) => this.push(chunk, name))
  }

  private push(chunk: Buffer, name: StreamName): void {
    if (this.capped || this.fd === undefined) return
    const room = this.maxBytes - this.marker.length - this.bytes
    if (chunk.length <= room) {
      this.write(chunk, name)
      return
    }
    if (room > 0) this.write(chunk.subarray(0, room), name)
    // A cap smaller than the marker keeps only as much of the marker as fits.
    this.write(this.marker.subarray(0, Math.max(0, this.maxBytes - this.bytes)), name)
    this.stopCapture()
  }

  private stopCapture(): void {
    if (this.capped) return
    this.capped = true
    for (const ender of this.enders) ender()
  }

  /** Why the log is not the shell's whole output, in a few words ('log removed', 'log failed (ENOSPC)'). */
  problem(): string | undefined {
    if (this.failure !== undefined) return `log failed (${this.failure})`
    try {
      // Removed while open: writes still land, in a file nobody can open.
      if (this.fd !== undefined ? fstatSync(this.fd).nlink === 0 : !lstatSync(this.path).isFile()) return 'log removed'
    } catch {
      return 'log removed'
    }
    return undefined
  }

  private write(buffer: Buffer, name: StreamName): void {
    if (this.fd === undefined || buffer.length === 0) return
    try {
      let offset = 0
      while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset)
      this.noteRun(name, buffer.length)
      this.bytes += buffer.length
      this.lastOutputAt = Date.now()
      for (const watcher of this.watchers) watcher(buffer, name)
    } catch (error) {
      this.failure = (error as NodeJS.ErrnoException).code ?? (error as Error).message
      this.stopCapture()
    }
  }

  private noteRun(name: StreamName, length: number): void {
    const runs = this.runs?.[name]
    if (runs !== undefined) {
      const last = runs.length - 3
      if (last >= 0 && (runs[last] ?? 0) + (runs[last + 2] ?? 0) === this.bytes) runs[last + 2] = (runs[last + 2] ?? 0) + length
      else runs.push(this.bytes, this.streamBytes[name], length)
    }
    this.streamBytes[name] += length
  }

  /** Where `stream`'s bytes from `from` (its own offset), at most `limit`, lie in the log; none unless kept. */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[] {
    const runs = this.runs?.[stream] ?? []
    const out: { at: number, length: number }[] = []
    let position = from
    let want = limit
    for (let i = 0; i + 2 < runs.length && want > 0; i += 3) {
      const [at = 0, start = 0, length = 0] = runs.slice(i, i + 3)
      if (start + length <= position) continue
      const take = Math.min(length - (position - start), want)
      out.push({ at: at + position - start, length: take })
      position += take
      want -= take
    }
    return out
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}
