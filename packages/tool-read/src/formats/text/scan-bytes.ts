// A text window on raw bytes, decoding only the lines shown.
/**
 * A window on raw bytes, decoding only the lines shown: UTF-8 off the local disk, mirroring the
 * provider's stream so it decides alike (64 KiB chunks, a NUL check over the first 8 KiB, fatal
 * decoding, BOM dropped, split characters carried); UTF-8 with bad bytes shown as U+FFFD; or a
 * line-safe legacy encoding. Lines end at LF, CRLF or a lone CR.
 */

import { isUtf8 } from 'node:buffer'
import iconv from 'iconv-lite'
import { checkFsAborted } from '@gencode-ai/dsh-tool-common'
import { allNul, NUL_RUN, NUL_SAMPLE, NulRun } from './encoding.ts'
import { EXACT_TOTAL_BYTES, WindowCollector, type TextWindow, type WindowRequest } from './window.ts'

/** The provider's stream chunk (fs.createReadStream's default highWaterMark). */
const CHUNK = 64 * 1024
const LF = 10
const CR = 13

/** Not strict UTF-8: detection decides what it is. */
export class NotText extends Error {}

/** Strict UTF-8 (throws NotText as the provider would), UTF-8 with bad bytes replaced, or a line-safe legacy encoding. */
export type ByteEncoding = { utf8: 'strict' | 'lenient' } | { legacy: string }

export type ByteWindow = TextWindow & {
  /** Lenient UTF-8: the first line holding bytes that are not UTF-8, among those scanned. */
  first_invalid_line?: number
}

/** Length of a trailing incomplete UTF-8 sequence (0 when the region ends on a boundary). */
function incompleteTail(bytes: Uint8Array): number {
  const end = bytes.length
  for (let back = 1; back <= Math.min(3, end); back++) {
    const byte = bytes[end - back] ?? 0
    if ((byte & 0xc0) === 0x80) continue
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return need > back ? back : 0
  }
  return 0
}

/** Whether a (possibly incomplete) sequence starting at `at` is a valid UTF-8 prefix (lead, second and third byte checked). */
function validPrefix(bytes: Uint8Array, at = 0, length = bytes.length - at): boolean {
  const lead = bytes[at] ?? 0
  if (lead < 0xc2 || lead > 0xf4) return false
  if (length < 2) return true
  const second = bytes[at + 1] ?? 0
  const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f]
    : lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf]
  if (second < low || second > high) return false
  return length < 3 || ((bytes[at + 2] ?? 0) & 0xc0) === 0x80
}

/** Offset of the first byte that is not UTF-8 (the region holds no incomplete tail), or -1. */
function firstInvalid(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const lead = bytes[i] ?? 0
    if (lead < 0x80) {
      i++
      continue
    }
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2
    if (i + need > bytes.length || !validPrefix(bytes, i, Math.min(need, 3))) return i
    if (need === 4 && ((bytes[i + 3] ?? 0) & 0xc0) !== 0x80) return i
    i += need
  }
  return -1
}

/** The line terminators of one region: LF, CRLF (one) or a lone CR, found with two cached memchr scans. */
class Ends {
  private lf = -2
  private cr = -2
  /** The terminator's length at the index `next` returned (1, or 2 for CRLF). */
  length = 1

  constructor(private readonly region: Uint8Array) {}

  /** Whether no CR is left at or after `from` (then plain LF counting applies). */
  noCr(from: number): boolean {
    if (this.cr !== -1 && this.cr < from) this.cr = this.region.indexOf(CR, from)
    return this.cr === -1
  }

  next(from: number): number {
    if (this.lf !== -1 && this.lf < from) this.lf = this.region.indexOf(LF, from)
    if (this.cr !== -1 && this.cr < from) this.cr = this.region.indexOf(CR, from)
    if (this.cr === -1 || (this.lf !== -1 && this.lf < this.cr)) {
      this.length = 1
      return this.lf
    }
    this.length = this.region[this.cr + 1] === LF ? 2 : 1
    return this.cr
  }
}

/** Lines ended within `bytes[0, end)`. */
function endsBefore(bytes: Uint8Array, end: number): number {
  const ends = new Ends(bytes.subarray(0, end))
  let count = 0
  for (let at = ends.next(0); at !== -1; at = ends.next(at + ends.length)) count++
  return count
}

export async function scanBytes(
  blocks: AsyncIterable<Buffer>, request: WindowRequest, size: number | undefined, signal: AbortSignal, encoding: ByteEncoding = { utf8: 'strict' },
): Promise<ByteWindow> {
  const window = new WindowCollector(request)
  const early = size !== undefined && size > EXACT_TOTAL_BYTES
  const legacy = 'legacy' in encoding ? encoding.legacy : undefined
  const strict = 'utf8' in encoding && encoding.utf8 === 'strict'
  // Enough bytes to hold maxLineLength + 1 whole UTF-16 units plus one split character.
  const perUnit = legacy === undefined ? 3 : 4
  const prefixCap = (request.maxLineLength + 1) * perUnit + perUnit
  const decoder = new TextDecoder('utf-8')
  const decode = (bytes: Buffer, start: number, end: number): string =>
    legacy === undefined ? bytes.toString('utf8', start, end) : iconv.decode(bytes.subarray(start, end), legacy)
  let parts: Uint8Array[] = []
  let partBytes = 0
  let partial = false
  let bytesSeen = 0
  let carry: Buffer = Buffer.alloc(0)
  let first = true
  let firstInvalidLine: number | undefined

  const keep = (segment: Uint8Array): void => {
    if (partBytes >= prefixCap || segment.length === 0) return
    const take = segment.subarray(0, prefixCap - partBytes)
    parts.push(Uint8Array.from(take))
    partBytes += take.length
  }
  const take = (decoded: string): void => {
    window.takeLine(decoded.length <= request.maxLineLength + 1 ? decoded : decoded.slice(0, request.maxLineLength + 1))
  }
  const finishLine = (): void => {
    const [only] = parts
    const bytes = parts.length === 1 && only !== undefined ? only : Buffer.concat(parts, partBytes)
    take(legacy === undefined ? decoder.decode(bytes) : iconv.decode(Buffer.from(bytes), legacy))
    parts = []
    partBytes = 0
  }

  /** One provider chunk: returns true when the scan may stop. */
  const chunk = (raw: Buffer, position: number): boolean => {
    if (raw.length === NUL_RUN && allNul(raw)) throw new NulRun()
    if (strict && position < NUL_SAMPLE && raw.subarray(0, NUL_SAMPLE - position).includes(0)) throw new NotText()
    let region = carry.length === 0 ? raw : Buffer.concat([carry, raw])
    // A character split by the chunk edge, or a CR whose LF may start the next chunk, waits for it.
    let tail = legacy === undefined ? incompleteTail(region) : 0
    if (tail > 0 && !validPrefix(region, region.length - tail)) {
      if (strict) throw new NotText()
      tail = 0
    }
    if (tail === 0 && region[region.length - 1] === CR) tail = 1
    carry = tail > 0 ? Buffer.from(region.subarray(region.length - tail)) : Buffer.alloc(0)
    region = region.subarray(0, region.length - tail)
    if (legacy === undefined && !isUtf8(region)) {
      if (strict) throw new NotText()
      if (firstInvalidLine === undefined) firstInvalidLine = window.lineCount + endsBefore(region, firstInvalid(region)) + 1
    }
    if (legacy === undefined && first && region.length > 0) {
      first = false
      if (region[0] === 0xef && region[1] === 0xbb && region[2] === 0xbf) region = region.subarray(3)
    }
    if (early) bytesSeen += region.length
    const ends = new Ends(region)
    let start = 0
    let end: number
    for (;;) {
      const skip = window.skippable
      if (skip > 0) {
        // Lines nobody will see are only counted: a tight memchr loop while no CR is left (its twin in scan-text.ts works on strings).
        let counted = 0
        if (ends.noCr(start)) {
          while (counted < skip && (end = region.indexOf(LF, start)) !== -1) {
            counted += 1
            start = end + 1
          }
        } else {
          while (counted < skip && (end = ends.next(start)) !== -1) {
            counted += 1
            start = end + ends.length
          }
        }
        window.lineCount += counted
        if (counted < skip) break
        continue
      }
      end = ends.next(start)
      if (end === -1) break
      if (parts.length === 0) {
        // The common case: the whole line lies in this chunk; decode it in place.
        take(decode(region, start, Math.min(end, start + prefixCap)))
      } else {
        keep(region.subarray(start, end))
        finishLine()
      }
      start = end + ends.length
    }
    if (start < region.length) {
      partial = true
      if (window.wantsNext) keep(region.subarray(start))
    } else if (start > 0) {
      partial = false
    }
    return early && window.canStop(partial)
  }

  const withInvalid = (result: TextWindow): ByteWindow =>
    firstInvalidLine === undefined ? result : { ...result, first_invalid_line: firstInvalidLine }
  let position = 0
  for await (const block of blocks) {
    checkFsAborted(signal, 'read')
    for (let at = 0; at < block.length; at += CHUNK) {
      const raw = block.subarray(at, Math.min(block.length, at + CHUNK))
      if (chunk(raw, position + at)) return withInvalid(window.estimate(size ?? 0, bytesSeen, partial))
    }
    position += block.length
  }
  if (carry.length === 1 && carry[0] === CR) {
    // A CR at the very end ends its line.
    if (window.wantsNext) {
      finishLine()
    } else {
      window.lineCount += 1
    }
    partial = false
  } else if (carry.length > 0) {
    if (strict) throw new NotText()
    // Lenient: a character cut off by the end of the file is one more bad byte.
    firstInvalidLine ??= window.lineCount + 1
    if (window.wantsNext) keep(carry)
    partial = true
  }
  if (partial) {
    if (window.wantsNext) finishLine()
    else window.lineCount += 1
  }
  return withInvalid(window.result(window.lineCount, true))
}
