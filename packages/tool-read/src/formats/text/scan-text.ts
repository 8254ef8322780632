/** Decoded text chunks into a window, holding one chunk and at most maxLineLength + 1 units of the line (LF, CRLF, CR end it). */

import { checkFsAborted } from '@gencode-ai/dsh-tool-common'
import { NulRun } from './encoding.ts'
import { EXACT_TOTAL_BYTES, WindowCollector, type TextWindow, type WindowRequest } from './window.ts'

/** NUL characters in a row that end a scan (a hole read through a provider), as NUL_RUN bytes do. */
const NUL_RUN_CHARS = 16 * 1024

/** The next line end at or after `from` in `text` and its length (CRLF is one), or -1. */
function nextEnd(text: string, from: number, found: { length: number }): number {
  const lf = text.indexOf('\n', from)
  const cr = text.indexOf('\r', from)
  if (cr === -1 || (lf !== -1 && lf < cr)) {
    found.length = 1
    return lf
  }
  found.length = text.charCodeAt(cr + 1) === 10 ? 2 : 1
  return cr
}

/** `counter`: the bytes consumed so far, when the chunks were not UTF-8. */
export async function scanTextChunks(
  chunks: AsyncIterable<string> | Iterable<string>, request: WindowRequest, size: number | undefined, signal: AbortSignal,
  counter?: { bytes: number },
): Promise<TextWindow> {
  const window = new WindowCollector(request)
  const cap = request.maxLineLength + 1
  // Only a file known to be large may stop before its end (its total is then estimated).
  const early = size !== undefined && size > EXACT_TOTAL_BYTES
  let line = ''
  let overflow = false
  let partial = false
  let bytesSeen = 0
  // A CR at a chunk's end waits: an LF may start the next chunk.
  let heldCr = false
  const found = { length: 1 }

  const append = (segment: string): void => {
    if (overflow) return
    if (line.length + segment.length > cap) {
      line += segment.slice(0, cap - line.length)
      overflow = true
    } else {
      line += segment
    }
  }
  const endLine = (): void => {
    window.takeLine(line)
    line = ''
    overflow = false
  }

  for await (const decoded of chunks) {
    checkFsAborted(signal, 'read')
    if (decoded.length >= NUL_RUN_CHARS && decoded.charCodeAt(0) === 0 && !/[^\0]/u.test(decoded)) throw new NulRun()
    if (early) bytesSeen = counter?.bytes ?? bytesSeen + Buffer.byteLength(decoded, 'utf8')
    let chunk: string = heldCr ? `\r${decoded}` : decoded
    heldCr = chunk.endsWith('\r')
    if (heldCr) chunk = chunk.slice(0, -1)
    let start = 0
    let end: number
    for (;;) {
      const skip = window.skippable
      if (skip > 0) {
        // The counting loop of scan-bytes.ts on strings (one shared loop is polymorphic: 35% slower on 1 GiB).
        let counted = 0
        if (chunk.indexOf('\r', start) === -1) {
          while (counted < skip && (end = chunk.indexOf('\n', start)) !== -1) {
            counted += 1
            start = end + 1
          }
        } else {
          while (counted < skip && (end = nextEnd(chunk, start, found)) !== -1) {
            counted += 1
            start = end + found.length
          }
        }
        window.lineCount += counted
        if (counted < skip) break
        continue
      }
      end = nextEnd(chunk, start, found)
      if (end === -1) break
      append(chunk.slice(start, end))
      endLine()
      start = end + found.length
    }
    if (start < chunk.length) {
      partial = true
      if (window.wantsNext) append(chunk.slice(start))
    } else if (start > 0) {
      partial = false
    }
    if (early && window.canStop(partial)) return window.estimate(size, bytesSeen, partial)
  }
  if (heldCr) {
    // A CR at the very end ends its line.
    if (window.wantsNext) endLine()
    else window.lineCount += 1
    partial = false
  }
  if (partial) {
    if (window.wantsNext) endLine()
    else window.lineCount += 1
  }
  return window.result(window.lineCount, true)
}
