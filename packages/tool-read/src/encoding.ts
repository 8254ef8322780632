/** Which encoding a text file is in: a BOM, else a legacy one chardet detects, decoded by iconv-lite (Node's windows-1252 gets € wrong). */

import { isAscii } from 'node:buffer'
import chardet from 'chardet'
import iconv from 'iconv-lite'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { quoted } from './quote.ts'

/** Unicode encodings named by a BOM. UTF-32 first: its LE BOM starts with UTF-16's. */
const BOMS: readonly [number[], string][] = [
  [[0xff, 0xfe, 0x00, 0x00], 'utf-32le'],
  [[0x00, 0x00, 0xfe, 0xff], 'utf-32be'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
]

export function bomEncoding(head: Uint8Array): string | undefined {
  return BOMS.find(([bom]) => bom.every((byte, i) => head[i] === byte))?.[1]
}

/** UTF-8 and UTF-16 read as before (the host's edit handles them); any other encoding gets a note. */
export function isUnicodeEditable(encoding: string): boolean {
  return /^utf-(8|16le|16be)$/u.test(encoding)
}

export function checkEncoding(label: string | undefined): void {
  if (label !== undefined && !iconv.encodingExists(label)) {
    throw new HarnessError(`encoding ${quoted(label)} is not an encoding read_file knows; use a label such as gbk, big5, shift_jis, euc-jp, euc-kr, windows-1252 or utf-16le, or omit it to detect`, 'INVALID_ARGS')
  }
}

/** Whether 0x0A is always a line feed (no trail byte is 0x0A: GB18030, Big5, Shift_JIS, EUC-*, code pages), so lines split on bytes. */
export function lineSafe(encoding: string): boolean {
  const lf = iconv.encode('\n', encoding)
  return lf.length === 1 && lf[0] === 0x0a
}

/** `counter.bytes` tracks the bytes consumed. */
export async function* decodeChunks(chunks: AsyncIterable<Buffer>, encoding: string, counter: { bytes: number }): AsyncIterable<string> {
  const decoder = iconv.getDecoder(encoding)
  for await (const chunk of chunks) {
    counter.bytes += chunk.length
    const text = decoder.write(chunk)
    if (text !== '') yield text
  }
  const tail = decoder.end()
  if (tail !== undefined && tail !== '') yield tail
}

/** The sample detection looks at: the first 64 KiB piece holding a non-ASCII byte. */
const SAMPLE_BYTES = 64 * 1024
/** The provider's binary sample: a NUL in the first 8 KiB marks a binary file. */
export const NUL_SAMPLE = 8192

const MULTI_BYTE = new Set(['GB18030', 'Big5', 'Shift_JIS', 'EUC-JP', 'EUC-KR'])

/**
 * The legacy encoding of a non-UTF-8 sample, or undefined when it looks binary. chardet decides when confident of a multi-byte
 * encoding; on a short sample it often is not (or wrongly sure of a single-byte one), so GB18030's shape comes next.
 */
export function detectLegacy(sample: Uint8Array): string | undefined {
  if (sample.includes(0) || strayBytesInUtf8(sample)) return undefined
  const best = chardet.analyse(sample).find((match) => !/^(UTF|ISO-2022|ASCII)/u.test(match.name))
  // ISO-8859-1 is decoded as the wider windows-1252 (the WHATWG mapping).
  const wider = best?.name === 'ISO-8859-1' ? 'windows-1252' : best?.name
  const name = best === undefined || best.confidence < 50 ? undefined : wider
  const confident = name !== undefined && iconv.encodingExists(name) ? name : undefined
  if (confident !== undefined && MULTI_BYTE.has(confident)) return confident
  // The sample may end inside a character: its last one is not judged.
  if (pairedHighBytes(sample) && !iconv.decode(sample, 'gb18030').slice(0, -1).includes('\uFFFD')) return 'GB18030'
  return confident ?? 'windows-1252'
}

/** UTF-8 but for a few stray bytes (9 in 10 non-ASCII characters decode): any legacy reading would garble it. */
function strayBytesInUtf8(sample: Uint8Array): boolean {
  let good = 0
  let bad = 0
  for (const char of new TextDecoder().decode(sample)) {
    if (char === '\uFFFD') bad++
    else if ((char.codePointAt(0) ?? 0) > 0x7f) good++
  }
  return good > 0 && good >= bad * 9
}

/** Whether most bytes above 0x7F come in runs of two or more (double-byte text), not alone (Latin text). */
function pairedHighBytes(sample: Uint8Array): boolean {
  let alone = 0
  let paired = 0
  for (let i = 0; i < sample.length; i++) {
    if ((sample[i] ?? 0) < 0x80) continue
    let end = i
    while ((sample[end] ?? 0) >= 0x80) end++
    if (end - i === 1) alone++
    else paired += end - i
    i = end
  }
  return paired > alone
}

/** The first SAMPLE_BYTES piece (aligned) that is not pure ASCII, or undefined when a NUL says binary first. */
export async function detectionSample(chunks: AsyncIterable<Buffer>): Promise<Uint8Array | undefined> {
  let first = true
  for await (const block of chunks) {
    if (first && block.subarray(0, NUL_SAMPLE).includes(0)) return undefined
    first = false
    for (let at = 0; at < block.length; at += SAMPLE_BYTES) {
      const piece = block.subarray(at, at + SAMPLE_BYTES)
      if (!isAscii(piece)) return piece
    }
  }
  return undefined
}
