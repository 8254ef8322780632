/** The text window both scanners share, fed one line at a time so both paths decide alike. */

import type { TextValue } from './value.ts'

/** Files up to this size get an exact line total; past it the scan stops after the window. */
export const EXACT_TOTAL_BYTES = 64 * 1024 * 1024

export interface WindowRequest {
  /** 1-based first line. */
  offset: number
  limit: number
  maxLineLength: number
  /** Budget for the rendered rows (UTF-8 bytes of number, TAB, text and newline each). */
  maxBytes: number
  /** Whether no line may be shown (the step's budget is short); else the first line always is, so paging never stalls. */
  mayBeEmpty?: boolean
}

/** A text read before the path and encoding are attached. */
export type TextWindow = Pick<TextValue, 'start_line' | 'lines' | 'total_lines' | 'total_exact' | 'cut_lines' | 'byte_capped'>

/** The width line numbers are padded to: the last line's, or the last shown when the total is an estimate. */
export function numberWidth(startLine: number, count: number, totalLines: number, totalExact: boolean): number {
  return String(totalExact ? totalLines : startLine + count - 1).length
}

/** Cut to `max` UTF-16 units without leaving half a surrogate pair. */
function cutAt(text: string, max: number): string {
  const code = text.charCodeAt(max - 1)
  return code >= 0xd800 && code <= 0xdbff ? text.slice(0, max - 1) : text.slice(0, max)
}

/** Cut to `maxBytes` of UTF-8, dropping the U+FFFD a split character decodes to, and say so. */
export function cutToBytes(text: string, maxBytes: number, what: string): string {
  const bytes = Buffer.from(text, 'utf8')
  if (bytes.length <= maxBytes) return text
  return `${bytes.subarray(0, maxBytes).toString('utf8').replace(/\uFFFD$/u, '')}... (${what} to ${maxBytes} bytes)`
}

/** A line to be shown holds a NUL byte: the window is not text. */
export class NulLine extends Error {
  constructor(readonly line: number) {
    super(`NUL byte on line ${line}`)
  }
}

export class WindowCollector {
  /** Complete lines seen so far (shown or skipped). */
  lineCount = 0
  readonly lines: string[] = []
  byteCapped = false
  /** Rendered bytes of the kept rows, counting each number at its own width (a lower bound). */
  private bytes = 0
  private readonly textBytes: number[] = []
  private readonly cutIndexes: number[] = []

  constructor(readonly request: WindowRequest) {}

  get full(): boolean {
    return this.byteCapped || this.lines.length >= this.request.limit
  }

  get wantsNext(): boolean {
    return !this.full && this.lineCount + 1 >= this.request.offset
  }

  /** How many next lines need no text (before the window, or any once it is full). */
  get skippable(): number {
    return this.full ? Number.POSITIVE_INFINITY : Math.max(0, this.request.offset - 1 - this.lineCount)
  }

  /** Keep the next line: `prefix` is at most maxLineLength + 1 units of it. A NUL in it makes the window binary. */
  takeLine(prefix: string): void {
    this.lineCount += 1
    if (prefix.includes('\0')) throw new NulLine(this.lineCount)
    const { maxLineLength, maxBytes } = this.request
    let text = prefix
    const cut = text.length > maxLineLength
    if (cut) text = `${cutAt(text, maxLineLength)}... (line truncated to ${maxLineLength} chars)`
    const bytes = Buffer.byteLength(text, 'utf8')
    // Number, TAB, text, newline. The padding is known only once the total is: result() trims.
    const row = String(this.request.offset + this.lines.length).length + 2 + bytes
    // The first line is always kept, so a tiny budget can never stall paging (a later step continues a short step budget).
    if ((this.lines.length > 0 || this.request.mayBeEmpty === true) && this.bytes + row > maxBytes) {
      this.byteCapped = true
      return
    }
    this.bytes += row
    if (cut) this.cutIndexes.push(this.lines.length)
    this.lines.push(text)
    this.textBytes.push(bytes)
  }

  /** Whether a scan without an exact total may stop: the window is full and a later line exists (`partial`: one has begun). */
  canStop(partial: boolean): boolean {
    return this.full && this.lineCount + (partial ? 1 : 0) >= this.request.offset + this.lines.length
  }

  /** The window of a scan stopped early: the total estimated from lines per byte so far, to three significant digits. */
  estimate(size: number, bytesSeen: number, partial: boolean): TextWindow {
    const seen = this.lineCount + (partial ? 1 : 0)
    const raw = bytesSeen > 0 ? size * (this.lineCount / bytesSeen) : seen
    const magnitude = 10 ** Math.max(0, Math.floor(Math.log10(Math.max(raw, 1))) - 2)
    return this.result(Math.max(seen, Math.round(raw / magnitude) * magnitude), false)
  }

  /** The window with rows measured at the final number width: rows that overflow once padded go (never the first). */
  result(totalLines: number, totalExact: boolean): TextWindow {
    const { offset, maxBytes } = this.request
    let count = this.lines.length
    let text = this.textBytes.reduce((sum, bytes) => sum + bytes, 0)
    const least = this.request.mayBeEmpty === true ? 0 : 1
    while (count > least && text + count * (numberWidth(offset, count, totalLines, totalExact) + 2) > maxBytes) {
      count -= 1
      text -= this.textBytes[count] ?? 0
    }
    const trimmed = count < this.lines.length
    return {
      start_line: offset,
      lines: trimmed ? this.lines.slice(0, count) : this.lines,
      total_lines: totalLines,
      total_exact: totalExact,
      cut_lines: this.cutIndexes.filter((index) => index < count).length,
      byte_capped: this.byteCapped || trimmed,
    }
  }
}
