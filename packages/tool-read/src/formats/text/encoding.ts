/** Encoding names and decoders: BOMs, the labels read_file takes, iconv-lite (Node's windows-1252 gets € wrong), WHATWG's ISO-2022-JP. */

import { isAscii } from 'node:buffer'
import iconv from 'iconv-lite'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { quoted } from '@gencode-ai/dsh-tool-common'
import { JohabDecoder } from './johab.ts'

/** Unicode encodings named by a BOM. UTF-32 first: its LE BOM starts with UTF-16's. */
const BOMS: readonly [number[], string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
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

const squeeze = (label: string): string => label.toLowerCase().replace(/[^a-z0-9]/gu, '')

export const isUtf8Label = (label: string): boolean => label.toLowerCase().replace(/[^a-z0-9]/gu, '') === 'utf8'

/** Decoded by Node's WHATWG TextDecoder (iconv-lite has no ISO-2022-JP), or by our own Johab decoder. */
const WHATWG = new Set(['iso-2022-jp', 'csiso2022jp'])
const isJohab = (label: string): boolean => squeeze(label) === 'johab'

/** Encodings people have that no decoder here reads: refused by name rather than garbled. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  euctw: 'EUC-TW', cns11643: 'EUC-TW', iso2022kr: 'ISO-2022-KR', csiso2022kr: 'ISO-2022-KR',
  iso2022cn: 'ISO-2022-CN', kz1048: 'KZ-1048', ptcp154: 'PTCP154', maclatin2: 'MacLatin2',
}
export function unsupportedName(label: string): string | undefined {
  return UNSUPPORTED[squeeze(label)]
}

export function checkEncoding(label: string | undefined): void {
  if (label === undefined) return
  const unsupported = unsupportedName(label)
  if (unsupported !== undefined) {
    throw new HarnessError(`encoding ${quoted(label)}: read_file cannot decode ${unsupported}; convert the file to UTF-8 first (iconv -f ${unsupported.toUpperCase()} -t UTF-8)`, 'INVALID_ARGS')
  }
  if (!WHATWG.has(label.toLowerCase()) && !isJohab(label) && !iconv.encodingExists(label)) {
    throw new HarnessError(`encoding ${quoted(label)} is not an encoding read_file knows; use a label such as gbk, big5, shift_jis, euc-jp, euc-kr, windows-1251, koi8-r or utf-16le, or omit it to detect`, 'INVALID_ARGS')
  }
}

/** Whether 0x0A is always a line feed (no trail byte is 0x0A: GB18030, Big5, Shift_JIS, EUC-*, code pages), so lines split on bytes. */
export function lineSafe(encoding: string): boolean {
  if (WHATWG.has(encoding.toLowerCase()) || isJohab(encoding)) return false
  const lf = iconv.encode('\n', encoding)
  return lf.length === 1 && lf[0] === 0x0a
}

/** Detector names to the names read_file reports, decoded by iconv-lite under the same name (supersets as WHATWG maps them). */
const CANONICAL: Readonly<Record<string, string>> = {
  iso88591: 'windows-1252', windows1252: 'windows-1252', shiftjis: 'Shift_JIS', cp932: 'Shift_JIS', shiftjis2004: 'Shift_JIS',
  eucjp: 'EUC-JP', eucjis2004: 'EUC-JP', gb18030: 'GB18030', gb2312: 'GB18030', gbk: 'GB18030', big5: 'Big5', big5hkscs: 'Big5',
  cp950: 'Big5', euckr: 'EUC-KR', cp949: 'EUC-KR', iso2022jp: 'ISO-2022-JP', iso2022jp2: 'ISO-2022-JP', iso2022jp2004: 'ISO-2022-JP',
  iso2022jpext: 'ISO-2022-JP', utf16le: 'utf-16le', utf16be: 'utf-16be', utf32le: 'utf-32le', utf32be: 'utf-32be',
  johab: 'Johab', utf8: 'utf-8', utf8sig: 'utf-8', ascii: 'utf-8', tis620: 'windows-874', cp874: 'windows-874', koi8r: 'KOI8-R', koi8u: 'KOI8-U', maccyrillic: 'MacCyrillic',
}

/** A detector's name as read_file reports it (a decoder exists for it), or undefined. */
export function readableName(name: string): string | undefined {
  const key = squeeze(name)
  const known = CANONICAL[key]
  if (known !== undefined) return known
  if (!iconv.encodingExists(name)) return undefined
  const windows = /^windows(\d+)$/u.exec(key)
  if (windows !== null) return `windows-${windows[1]}`
  const iso = /^iso8859(\d+)$/u.exec(key)
  if (iso !== null) return `ISO-8859-${iso[1]}`
  return /^(ibm|cp)\d+$/u.test(key) ? key.toUpperCase() : name
}

/** A streaming decoder for `encoding` (iconv-lite's, or WHATWG's for ISO-2022-JP). */
function decoderFor(encoding: string): { write(chunk: Buffer): string, end(): string | undefined } {
  if (isJohab(encoding)) return new JohabDecoder()
  if (!WHATWG.has(encoding.toLowerCase())) return iconv.getDecoder(encoding)
  const decoder = new TextDecoder(encoding)
  return { write: (chunk) => decoder.decode(chunk, { stream: true }), end: () => decoder.decode() }
}

/** The sample as text, its last character dropped (the sample may end inside one). */
export function decodeSample(sample: Uint8Array, encoding: string): string {
  const decoder = decoderFor(encoding)
  return decoder.write(Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength)).slice(0, -1)
}

/** The error a scan throws at a run of NUL bytes (a hole in a sparse file, a blob): no text goes on so. */
export class NulRun extends Error {}

/** Bytes of NUL in a row that end a text scan: a whole chunk (text never has them; a sparse file's hole does). */
export const NUL_RUN = 64 * 1024
const ZEROS = new Uint8Array(NUL_RUN)

/** Whether `bytes` is NUL throughout (memcmp: the first byte of text ends it). */
export function allNul(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === 0 && Buffer.compare(bytes, ZEROS.subarray(0, bytes.length)) === 0
}

/** `counter.bytes` tracks the bytes consumed. */
export async function* decodeChunks(chunks: AsyncIterable<Buffer>, encoding: string, counter: { bytes: number }): AsyncIterable<string> {
  const decoder = decoderFor(encoding)
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += NUL_RUN) {
      const piece = chunk.subarray(at, at + NUL_RUN)
      if (piece.length === NUL_RUN && allNul(piece)) throw new NulRun()
      counter.bytes += piece.length
      const text = decoder.write(piece)
      if (text !== '') yield text
    }
  }
  const tail = decoder.end()
  if (tail !== undefined && tail !== '') yield tail
}

/** The sample detection looks at: the first 64 KiB piece holding a non-ASCII or NUL byte. */
const SAMPLE_BYTES = 64 * 1024
/** The provider's binary sample: a NUL in the first 8 KiB marks a binary file. */
export const NUL_SAMPLE = 8192

/** The first SAMPLE_BYTES piece (aligned) that is not plain ASCII text, or undefined when there is none. */
export async function detectionSample(chunks: AsyncIterable<Buffer>): Promise<Uint8Array | undefined> {
  for await (const block of chunks) {
    for (let at = 0; at < block.length; at += SAMPLE_BYTES) {
      const piece = block.subarray(at, at + SAMPLE_BYTES)
      if (!isAscii(piece) || piece.includes(0)) return Uint8Array.from(piece)
    }
  }
  return undefined
}
