/**
 * A watched shell's output as lines of each stream, with where each line's bytes lie in the log: the streams share one
 * log in arrival order, so a line of one may be split by writes of the other. A line ends at LF, CRLF or a lone CR
 * (as wait_for's lines end); a line ending in another write than it began in is still one line.
 */
import type { StreamName } from '../shells/world-types.ts'

/** Bytes of a line kept for matching and showing (the rest is counted in its range, not kept). */
const MAX_LINE_BYTES = 16 * 1024
const LF = 0x0a
const CR = 0x0d

/** One complete line: its text, its stream, and the log bytes from its first to just past its end. */
export interface WatchedLine {
  text: string
  stream: StreamName
  start: number
  end: number
}

class StreamLines {
  private parts: Buffer[] = []
  private kept = 0
  /** Log offset of the pending line's first byte; -1 when none is pending. */
  private start = -1
  /** The last write ended in CR: an LF starting the next belongs to that line's end. */
  private afterCr = false

  constructor(private readonly stream: StreamName) {}

  feed(bytes: Buffer, at: number, out: WatchedLine[]): void {
    let from = this.afterCr && bytes[0] === LF ? 1 : 0
    this.afterCr = false
    let nextCr = bytes.indexOf(CR, from)
    while (from < bytes.length) {
      const nextLf = bytes.indexOf(LF, from)
      if (nextCr !== -1 && nextCr < from) nextCr = bytes.indexOf(CR, from)
      const end = nextLf === -1 ? nextCr : nextCr === -1 ? nextLf : Math.min(nextLf, nextCr)
      if (end === -1) break
      let after = end + 1
      if (bytes[end] === CR) {
        if (end + 1 === bytes.length) this.afterCr = true
        else if (bytes[end + 1] === LF) after++
      }
      this.take(bytes.subarray(from, end), at + from)
      out.push({ text: this.text(), stream: this.stream, start: this.start, end: at + after })
      this.parts = []
      this.kept = 0
      this.start = -1
      from = after
    }
    if (from < bytes.length) this.take(bytes.subarray(from), at + from)
  }

  private take(bytes: Buffer, at: number): void {
    if (this.start === -1) this.start = at
    const room = MAX_LINE_BYTES - this.kept
    if (room <= 0 || bytes.length === 0) return
    const kept = bytes.length > room ? bytes.subarray(0, room) : bytes
    this.parts.push(kept)
    this.kept += kept.length
  }

  private text(): string {
    return Buffer.concat(this.parts).toString('utf8')
  }
}

export class WatchLines {
  /** `offset`: the log offset of the first byte fed (a watch re-armed after a restart starts past the log's start). */
  constructor(public offset = 0) {}
  private readonly streams = { stdout: new StreamLines('stdout'), stderr: new StreamLines('stderr') }

  /** The lines this write completes. */
  feed(written: Buffer, stream: StreamName): WatchedLine[] {
    const lines: WatchedLine[] = []
    this.streams[stream].feed(written, this.offset, lines)
    this.offset += written.length
    return lines
  }
}
