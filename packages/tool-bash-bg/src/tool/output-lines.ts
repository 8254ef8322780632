/**
 * A shell's output as lines for matching: decoded as UTF-8 across chunk boundaries; a line ends at LF, CRLF or a
 * lone CR (as read_file counts lines, so `10%\r50%\rReady` ends in the line `Ready`); each line cut to MAX_LINE
 * characters, so a line without an end holds bounded memory.
 */
import { StringDecoder } from 'node:string_decoder'

/** Characters of a line kept (the rest is ignored). */
const MAX_LINE = 4096

const LINE_END = /\r\n?|\n/g

export class OutputLines {
  private readonly decoder = new StringDecoder('utf8')
  /** The start of a line whose end has not come yet (at most MAX_LINE characters of it). */
  private partial = ''
  /** The last chunk ended in CR: an LF that starts the next one belongs to it (CRLF), not to an empty line. */
  private afterCr = false

  /** The lines this chunk completes, in order. */
  feed(bytes: Buffer): string[] {
    let text = this.decoder.write(bytes)
    if (this.afterCr && text.startsWith('\n')) text = text.slice(1)
    if (text.length > 0) this.afterCr = text.endsWith('\r')
    text = this.partial + text
    const lines: string[] = []
    let start = 0
    LINE_END.lastIndex = 0
    for (let end = LINE_END.exec(text); end !== null; end = LINE_END.exec(text)) {
      lines.push(text.slice(start, Math.min(end.index, start + MAX_LINE)))
      start = LINE_END.lastIndex
    }
    this.partial = text.slice(start, start + MAX_LINE)
    return lines
  }

  /** The line still waiting for its end ('' when none). */
  pending(): string {
    return this.partial
  }
}
