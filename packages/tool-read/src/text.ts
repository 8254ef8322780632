/** The text reader: `encoding`, else a BOM, else strict UTF-8, else a legacy encoding detected on a sample, else binary. */

import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import { bomEncoding, decodeChunks, detectionSample, detectLegacy, isUnicodeEditable, lineSafe } from './encoding.ts'
import type { ReadRequest, ReadResult } from './reader.ts'
import { NotText, scanBytes } from './scan-bytes.ts'
import { scanTextChunks } from './scan-text.ts'
import type { Source } from './source.ts'
import type { TextWindow, WindowRequest } from './window.ts'

export type TextRead = TextWindow & {
  /** `utf-8`, `utf-16le`/`be`, `utf-32le`/`be`, or the legacy encoding decoded from (`GB18030`, `windows-1252`, …). */
  encoding: string
}

function binaryError(target: FsTarget): FsError {
  return new FsError(`cannot read "${target.displayPath}": binary file (NUL bytes, or text in no encoding read_file recognises — pass encoding if you know it); read_file reads text, PDFs, png/jpg/gif/webp/bmp images and .ipynb notebooks`, 'FS_NOT_TEXT')
}

/** Through a provider, non-UTF-8 text is read whole: over maxFileBytes its encoding is not checked. */
function unchecked(source: Source, error: unknown): unknown {
  if (!(error instanceof FsError && error.code === 'FS_TOO_LARGE')) return error
  return new FsError(`cannot read "${source.target.displayPath}": not UTF-8 text, and this file system provider reads other text whole, so a file over maxFileBytes (${source.maxFileBytes}) is not decoded — convert it to UTF-8, read a smaller file, or raise maxFileBytes in tool-read's config`, 'FS_TOO_LARGE')
}

async function decodeAs(source: Source, request: WindowRequest, encoding: string): Promise<TextRead> {
  const { info, exec: { signal } } = source
  try {
    if (lineSafe(encoding)) return { ...await scanBytes(source.chunks(undefined, true), request, info.size, signal, encoding), encoding }
    const counter = { bytes: 0 }
    return { ...await scanTextChunks(decodeChunks(source.chunks(), encoding, counter), request, info.size, signal, counter), encoding }
  } catch (error) {
    throw unchecked(source, error)
  }
}

async function readUtf8(source: Source, request: WindowRequest): Promise<TextRead | undefined> {
  const { ctx, target, info, exec: { signal }, local } = source
  try {
    // Ranges mirror the provider's stream (scanBytes decides as it does) without loading the file.
    const window = local !== undefined || source.ranged()
      ? await scanBytes(source.chunks(undefined, true), request, info.size, signal)
      : await scanTextChunks(await ctx.fs.streamText(target, signal), request, info.size, signal)
    return { ...window, encoding: 'utf-8' }
  } catch (error) {
    if (error instanceof NotText || (error instanceof FsError && error.code === 'FS_NOT_TEXT')) return undefined
    throw error
  }
}

async function decide(source: Source, request: WindowRequest, label: string | undefined): Promise<TextRead> {
  const utf8Label = label?.toLowerCase().replace(/[^a-z0-9]/gu, '') === 'utf8'
  if (label !== undefined && !utf8Label) return await decodeAs(source, request, label.toLowerCase())
  const bom = label === undefined ? bomEncoding(await source.head()) : undefined
  if (bom !== undefined) return await decodeAs(source, request, bom)
  const utf8 = await readUtf8(source, request)
  if (utf8 !== undefined) return utf8
  if (label !== undefined) throw binaryError(source.target)
  const sample = await detectionSample(source.chunks()).catch((error: unknown) => {
    throw unchecked(source, error)
  })
  const legacy = sample === undefined ? undefined : detectLegacy(sample)
  if (legacy === undefined) throw binaryError(source.target)
  return await decodeAs(source, request, legacy)
}

export async function readText({ source, config, options }: ReadRequest): Promise<ReadResult> {
  const request = { offset: options.offset, limit: options.limit, maxLineLength: config.maxLineLength, maxBytes: config.maxBytes }
  const text = await decide(source, request, options.encoding)
  // The host's edit and write save UTF-8: an observation would let them re-encode a legacy file.
  return { value: { kind: 'text', path: source.target.displayPath, ...text }, observe: isUnicodeEditable(text.encoding) }
}
