/** The text reader: `encoding`, else a BOM, else strict UTF-8, else a detected encoding (UTF-8 with bad bytes among them), else binary. */

import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import { echo } from '@gencode-ai/dsh-tool-common'
import { detect, strayBytesInUtf8 } from './detect.ts'
import { bomEncoding, decodeChunks, detectionSample, isUnicodeEditable, isUtf8Label, lineSafe, NUL_RUN, NulRun } from './encoding.ts'
import type { ReadRequest, ReadResult } from '../../reader.ts'
import { NotText, scanBytes } from './scan-bytes.ts'
import { scanTextChunks } from './scan-text.ts'
import type { Source } from '../../source.ts'
import type { TextValue } from './value.ts'
import { NulLine, type WindowRequest } from './window.ts'

/** A text read before the path is attached. */
type TextRead = Omit<TextValue, 'kind' | 'path' | 'grew'>

const NO_ENCODING = 'NUL bytes, or text in no encoding read_file recognises — pass encoding if you know it'

function binaryError(target: FsTarget, why = NO_ENCODING): FsError {
  return new FsError(`cannot read ${echo(target.displayPath)}: binary file (${why}); read_file reads text, PDFs, png/jpg/gif/webp/bmp images and .ipynb notebooks`, 'FS_NOT_TEXT')
}

function unsupported(target: FsTarget, name: string): FsError {
  return new FsError(`cannot read ${echo(target.displayPath)}: it looks like ${name} text, which read_file cannot decode — convert it to UTF-8 first (iconv -f ${name} -t UTF-8)`, 'FS_NOT_TEXT')
}

/** NULs where text was expected, as the binary error that names them. */
function nulError(source: Source, error: unknown): unknown {
  if (error instanceof NulLine) return binaryError(source.target, `a NUL byte on line ${error.line}`)
  if (error instanceof NulRun) return binaryError(source.target, `${NUL_RUN / 1024} KiB of NUL bytes in a row, as in a sparse file's hole`)
  return error
}

/** Through a provider, non-UTF-8 text is read whole: over maxFileBytes its encoding is not checked. */
function unchecked(source: Source, error: unknown): unknown {
  if (!(error instanceof FsError && error.code === 'FS_TOO_LARGE')) return nulError(source, error)
  return new FsError(`cannot read ${echo(source.target.displayPath)}: not UTF-8 text, and this file system provider reads other text whole, so a file over maxFileBytes (${source.maxFileBytes}) is not decoded — convert it to UTF-8, read a smaller file, or raise maxFileBytes in tool-read's config`, 'FS_TOO_LARGE')
}

async function decodeAs(source: Source, request: WindowRequest, encoding: string, alternatives?: string[]): Promise<TextRead> {
  const { info, signal } = source
  const guess = alternatives === undefined ? {} : { alternatives }
  try {
    if (lineSafe(encoding)) {
      return { ...await scanBytes(source.chunks(undefined, true), request, info.size, signal, { legacy: encoding }), encoding, ...guess }
    }
    const counter = { bytes: 0 }
    const window = await scanTextChunks(decodeChunks(source.chunks(), encoding, counter), request, info.size, signal, counter)
    return { ...window, encoding, ...guess }
  } catch (error) {
    throw unchecked(source, error)
  }
}

/** UTF-8 whatever its bytes: bad ones show as U+FFFD, the value names the first line holding one (`invalid`: known to hold some). */
async function readLenientUtf8(source: Source, request: WindowRequest, invalid: boolean): Promise<TextRead> {
  const { info, signal } = source
  try {
    const window = await scanBytes(source.chunks(undefined, true), request, info.size, signal, { utf8: 'lenient' })
    return { ...window, encoding: 'utf-8', ...invalid && window.first_invalid_line === undefined ? { first_invalid_line: null } : {} }
  } catch (error) {
    throw unchecked(source, error)
  }
}

async function readUtf8(source: Source, request: WindowRequest): Promise<TextRead | undefined> {
  const { info, signal, local } = source
  try {
    // Ranges mirror the provider's stream (scanBytes decides as it does) without loading the file.
    const window = local !== undefined || source.ranged()
      ? await scanBytes(source.chunks(undefined, true), request, info.size, signal)
      : await scanTextChunks(await source.streamText(), request, info.size, signal)
    return { ...window, encoding: 'utf-8' }
  } catch (error) {
    if (error instanceof NotText || (error instanceof FsError && error.code === 'FS_NOT_TEXT')) return undefined
    throw nulError(source, error)
  }
}

/** ISO-2022 text is 7-bit, so it passes as UTF-8: its escapes say what it is (ISO-2022-KR's once, at the top). */
const ISO_2022_JP = ['\x1b$B', '\x1b$@']
const ISO_2022_KR = '\x1b$)C'
/** ISO-2022-JP's designations and the bytes a character takes after each: ASCII, JIS-Roman, half-width kana; JIS X 0208. */
const DESIGNATIONS = new Map([['(B', 1], ['(J', 1], ['(I', 1], ['$@', 2], ['$B', 2]])

/**
 * Whether `text` (bytes as latin1, or lines read as UTF-8) is ISO-2022-JP throughout: 7-bit, every escape a designation
 * of it, every two-byte run pairs of 0x21-0x7E (a line break returns to ASCII, as writers do). One stray escape in UTF-8
 * text is not enough.
 */
function iso2022Jp(text: string): boolean {
  let width = 1
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code > 0x7f) return false
    if (code === 0x1b) {
      const next = DESIGNATIONS.get(text.slice(at + 1, at + 3))
      if (next === undefined && at + 3 <= text.length) return false
      width = next ?? width
      at += 2
    } else if (code === 0x0a || code === 0x0d) {
      width = 1
    } else if (width === 2) {
      const trail = text.charCodeAt(++at)
      if (code < 0x21 || code > 0x7e || (at < text.length && (trail < 0x21 || trail > 0x7e))) return false
    }
  }
  return true
}

async function decide(source: Source, request: WindowRequest, label: string | undefined): Promise<TextRead> {
  if (label !== undefined && !isUtf8Label(label)) return await decodeAs(source, request, label.toLowerCase())
  if (label !== undefined) return await readLenientUtf8(source, request, false)
  const head = await source.head()
  const bom = bomEncoding(head)
  if (bom !== undefined && bom !== 'utf-8') return await decodeAs(source, request, bom)
  const utf8 = await readUtf8(source, request)
  if (utf8 !== undefined) {
    if (Buffer.from(head).includes(ISO_2022_KR)) throw unsupported(source.target, 'ISO-2022-KR')
    const escaped = utf8.lines.some((line) => ISO_2022_JP.some((escape) => line.includes(escape)))
    const jp = escaped && iso2022Jp(Buffer.from(head).toString('latin1')) && iso2022Jp(utf8.lines.join('\n'))
    return jp ? await decodeAs(source, request, 'ISO-2022-JP') : utf8
  }
  // A BOM says UTF-8 whatever the detector would guess from a few bad bytes.
  if (bom === 'utf-8') return await readLenientUtf8(source, request, true)
  const sample = await detectionSample(source.chunks()).catch((error: unknown) => {
    throw unchecked(source, error)
  })
  if (sample === undefined) throw binaryError(source.target)
  if (strayBytesInUtf8(sample)) return await readLenientUtf8(source, request, true)
  const found = await detect(sample, source.info.size)
  if (found.kind === 'binary') throw binaryError(source.target)
  if (found.kind === 'unsupported') throw unsupported(source.target, found.name)
  if (found.encoding === 'utf-8') return await readLenientUtf8(source, request, true)
  return await decodeAs(source, request, found.encoding, found.alternatives)
}

export async function readText({ source, config, options }: ReadRequest): Promise<ReadResult> {
  const { offset, limit, maxBytes = config.maxBytes, mayBeEmpty = false } = options
  const request = { offset, limit, maxLineLength: config.maxLineLength, maxBytes, mayBeEmpty }
  const text = await decide(source, request, options.encoding)
  // The host's edit and write save UTF-8: an observation would let them re-encode a legacy file (or drop bad bytes).
  return { value: { kind: 'text', path: source.target.displayPath, ...text }, observe: isUnicodeEditable(text.encoding) && text.first_invalid_line === undefined }
}
