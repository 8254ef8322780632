/**
 * A window on raw bytes, decoding only the lines shown: UTF-8 off the local disk, mirroring the
 * provider's stream so it decides alike (64 KiB chunks, a NUL check over the first 8 KiB, fatal
 * decoding, BOM dropped, split characters carried), or a line-safe legacy encoding.
 */

import { isUtf8 } from 'node:buffer'
import iconv from 'iconv-lite'
import { FsError } from '@deepseek-ai/dsh-fs'
import { NUL_SAMPLE } from './encoding.ts'
import { EXACT_TOTAL_BYTES, WindowCollector, type TextWindow, type WindowRequest } from './window.ts'

/** The provider's stream chunk (fs.createReadStream's default highWaterMark). */
const CHUNK = 64 * 1024

export class NotText extends Error {}

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

/** Whether a trailing incomplete sequence can still become valid (else a fatal decoder throws now). */
function validPrefix(tail: Uint8Array): boolean {
  const lead = tail[0] ?? 0
  if (lead < 0xc2 || lead > 0xf4) return false
  const second = tail[1]
  if (second === undefined) return true
  const [low, high] = lead === 0xe0 ? [0xa0, 0xbf] : lead === 0xed ? [0x80, 0x9f]
    : lead === 0xf0 ? [0x90, 0xbf] : lead === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf]
  if (second < low || second > high) return false
  const third = tail[2]
  return third === undefined || (third & 0xc0) === 0x80
}

/** `encoding` undefined: strict UTF-8 (throws NotText as the provider would); else a line-safe legacy encoding. */
export async function scanBytes(
  blocks: AsyncIterable<Buffer>, request: WindowRequest, size: number | undefined, signal: AbortSignal, encoding?: string,
): Promise<TextWindow> {
  const window = new WindowCollector(request)
  const early = size !== undefined && size > EXACT_TOTAL_BYTES
  const utf8 = encoding === undefined
  // Enough bytes to hold maxLineLength + 1 whole UTF-16 units plus one split character.
  const perUnit = utf8 ? 3 : 4
  const prefixCap = (request.maxLineLength + 1) * perUnit + perUnit
  const decoder = new TextDecoder('utf-8')
  const decode = (bytes: Buffer, start: number, end: number): string =>
    utf8 ? bytes.toString('utf8', start, end) : iconv.decode(bytes.subarray(start, end), encoding)
  let parts: Uint8Array[] = []
  let partBytes = 0
  let lineBytes = 0
  let partial = false
  let bytesSeen = 0
  let carry: Buffer = Buffer.alloc(0)
  let first = true

  const keep = (segment: Uint8Array): void => {
    lineBytes += segment.length
    if (partBytes >= prefixCap || segment.length === 0) return
    const take = segment.subarray(0, prefixCap - partBytes)
    parts.push(Uint8Array.from(take))
    partBytes += take.length
  }
  const take = (decoded: string, allBytes: boolean): void => {
    const whole = allBytes && decoded.length <= request.maxLineLength + 1
    window.takeLine(whole ? decoded : decoded.slice(0, request.maxLineLength + 1), whole)
  }
  const finishLine = (): void => {
    const [only] = parts
    const bytes = parts.length === 1 && only !== undefined ? only : Buffer.concat(parts, partBytes)
    take(utf8 ? decoder.decode(bytes) : iconv.decode(bytes, encoding), partBytes === lineBytes)
    parts = []
    partBytes = 0
    lineBytes = 0
  }

  /** One provider chunk: returns true when the scan may stop. */
  const chunk = (raw: Buffer, position: number): boolean => {
    let region = raw
    if (utf8) {
      if (position < NUL_SAMPLE && raw.subarray(0, NUL_SAMPLE - position).includes(0)) throw new NotText()
      region = carry.length === 0 ? raw : Buffer.concat([carry, raw])
      const tail = incompleteTail(region)
      if (tail > 0 && !validPrefix(region.subarray(region.length - tail))) throw new NotText()
      carry = tail > 0 ? Buffer.from(region.subarray(region.length - tail)) : Buffer.alloc(0)
      region = region.subarray(0, region.length - tail)
      if (!isUtf8(region)) throw new NotText()
    }
    if (utf8 && first && region.length > 0) {
      first = false
      if (region[0] === 0xef && region[1] === 0xbb && region[2] === 0xbf) region = region.subarray(3)
    }
    if (early) bytesSeen += region.length
    let start = 0
    let newline: number
    for (;;) {
      const skip = window.skippable
      if (skip > 0) {
        // Lines nobody will see are only counted: a tight memchr loop (its twin in scan-text.ts works on strings).
        let counted = 0
        while (counted < skip && (newline = region.indexOf(10, start)) !== -1) {
          counted += 1
          start = newline + 1
        }
        window.lineCount += counted
        if (counted < skip) break
        continue
      }
      newline = region.indexOf(10, start)
      if (newline === -1) break
      if (parts.length === 0 && lineBytes === 0) {
        // The common case: the whole line lies in this chunk; decode it in place.
        const end = Math.min(newline, start + prefixCap)
        take(decode(region, start, end), end === newline)
      } else {
        keep(region.subarray(start, newline))
        finishLine()
      }
      start = newline + 1
    }
    if (start < region.length) {
      partial = true
      if (window.wantsNext) keep(region.subarray(start))
    } else if (start > 0) {
      partial = false
    }
    return early && window.canStop(partial)
  }

  let position = 0
  for await (const block of blocks) {
    if (signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
    for (let at = 0; at < block.length; at += CHUNK) {
      const raw = block.subarray(at, Math.min(block.length, at + CHUNK))
      if (chunk(raw, position + at)) return window.estimate(size ?? 0, bytesSeen, partial)
    }
    position += block.length
  }
  if (carry.length > 0) throw new NotText()
  if (partial) {
    if (window.wantsNext) finishLine()
    else window.lineCount += 1
  }
  return window.result(window.lineCount, true)
}
