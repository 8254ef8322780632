// A shell's capped log: both streams in arrival order, one new 0600 file; at the cap (or a disk error) a marker
// ends it and later output is drained. Beside it, when asked, the stream sidecar: one `<offset> <length>` line per
// stderr piece, so the stream of any byte range is recoverable (stream-runs.ts). Sync writes: about 3x faster than
// queued async ones (bench/bash-bg). Written by the keeper for a local shell, by the host for another world's.
import { closeSync, constants, fstatSync, lstatSync, openSync, writeSync } from 'node:fs'
import type { Readable } from 'node:stream'
import { StreamPieces } from './stream-pieces.ts'

/** Which of the command's streams a piece of the log came from. */
export type StreamName = 'stdout' | 'stderr'

/** Told each piece as written, with its stream (the cap's marker comes with the stream whose piece reached the cap). */
export type LogWatcher = (written: Buffer, stream: StreamName) => void

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND

/**
 * Why a log is not a shell's whole output, in a few words, or undefined: `failure` (the disk error that stopped capture),
 * or the file removed — by its open descriptor's link count (removed while open: writes still land, in a file nobody
 * can open), else by its path.
 */
export function logProblem(path: string, fd: number | undefined, failure?: string): string | undefined {
  if (failure !== undefined) return `log failed (${failure})`
  try {
    if (fd !== undefined ? fstatSync(fd).nlink === 0 : !lstatSync(path).isFile()) return 'log removed'
  } catch {
    return 'log removed'
  }
  return undefined
}

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
  /** The stream sidecar's descriptor, made at the first stderr piece (one that cannot be written is dropped, never the log). */
  private runs: number | undefined
  private readonly marker: Buffer
  /** With `pieces`: where each stream's bytes lie. */
  private readonly kept: StreamPieces | undefined

  /**
   * `toolName`: the name the cap's marker gives; `streams`: the sidecar's path, when one is kept; `pieces`: keep where
   * each stream's bytes lie.
   */
  constructor(readonly path: string, private readonly maxBytes: number, toolName: string, private streams?: string, pieces = false) {
    this.kept = pieces ? new StreamPieces() : undefined
    // O_EXCL: a log is always a new file of ours, never someone else's file at a guessed path.
    this.fd = openSync(path, CREATE, 0o600)
    this.marker = Buffer.from(`\n[${toolName}: log capped at ${maxBytes} bytes; later output was discarded]\n`)
  }

  /** Drained to its end even after the cap. */
  attach(stream: Readable, name: StreamName): void {
    stream.on('data', (chunk: Buffer) => this.push(chunk, name))
  }

  push(chunk: Buffer, stream: StreamName): void {
    if (this.capped || this.fd === undefined) return
    const room = this.maxBytes - this.marker.length - this.bytes
    if (chunk.length <= room) {
      this.write(chunk, stream)
      return
    }
    if (room > 0) this.write(chunk.subarray(0, room), stream)
    // A cap smaller than the marker keeps only as much of the marker as fits.
    this.write(this.marker.subarray(0, Math.max(0, this.maxBytes - this.bytes)), stream)
    this.stopCapture()
  }

  private stopCapture(): void {
    if (this.capped) return
    this.capped = true
    for (const ender of this.enders) ender()
  }

  /** Why the log is not the shell's whole output, in a few words ('log removed', 'log failed (ENOSPC)'). */
  problem(): string | undefined {
    return logProblem(this.path, this.fd, this.failure)
  }

  private write(buffer: Buffer, stream: StreamName): void {
    if (this.fd === undefined || buffer.length === 0) return
    try {
      let offset = 0
      while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset)
      if (stream === 'stderr') this.noteStderr(this.bytes, buffer.length)
      this.kept?.note(stream, this.bytes, buffer.length)
      this.bytes += buffer.length
      this.lastOutputAt = Date.now()
      for (const watcher of this.watchers) watcher(buffer, stream)
    } catch (error) {
      this.failure = (error as NodeJS.ErrnoException).code ?? (error as Error).message
      this.stopCapture()
    }
  }

  /** One sidecar line per stderr piece (one write: a line is never torn by a crash between two). */
  private noteStderr(offset: number, length: number): void {
    if (this.streams !== undefined) {
      try {
        this.runs = openSync(this.streams, CREATE, 0o600)
      } catch {}
      this.streams = undefined
    }
    if (this.runs === undefined) return
    try {
      writeSync(this.runs, `${offset} ${length}\n`)
    } catch {
      closeSync(this.runs)
      this.runs = undefined
    }
  }

  /** Where `stream`'s bytes from `from` (its own offset), at most `limit`, lie in the log; none unless kept. */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[] {
    return this.kept?.pieces(stream, from, limit) ?? []
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    if (this.runs !== undefined) closeSync(this.runs)
    this.fd = undefined
    this.runs = undefined
  }
}
