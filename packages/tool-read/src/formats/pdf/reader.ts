/** The PDF reader: pages chosen here, their text from pdf.js in a bounded worker thread (pdf-thread.ts), within MAX_PAGES and maxBytes. */

import type { Context } from '@deepseek-ai/cordis'
import { FsError } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { echo, fsAborted, quoted } from '@gencode-ai/dsh-tool-common'
import { pdfEvidence, type PdfEvidence } from './sniff.ts'
import { PdfError, PdfParse, PdfPool } from './thread.ts'
import type { ReadRequest, ReadResult } from '../../reader.ts'
import { readText } from '../text/reader.ts'
import { pageRanges } from './render.ts'
import type { PdfValue } from './value.ts'
import { cutToBytes } from '../text/window.ts'

const DEFAULT_PAGES = 10
const MAX_PAGES = 20

/** "2,4-6" -> [2, 4, 5, 6]: sorted, without repeats, each within 1..total. */
function parsePages(pages: string, total: number, file: string): number[] {
  const wanted = new Set<number>()
  for (const part of pages.split(',')) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/u.exec(part)
    if (match === null) throw new HarnessError(`pages must be like "3", "1-5" or "2,4-6" (got ${quoted(pages)})`, 'INVALID_ARGS')
    const from = Number(match[1])
    const to = match[2] === undefined ? from : Number(match[2])
    if (from < 1 || to > total || from > to) {
      throw new HarnessError(`pages ${quoted(pages)} is out of range: ${file} has ${total} ${total === 1 ? 'page' : 'pages'} (1-${total})`, 'INVALID_ARGS')
    }
    for (let page = from; page <= to; page++) wanted.add(page)
  }
  return [...wanted].sort((a, b) => a - b)
}

/** Every failure pdf.js reports, in our shape. */
function pdfFailure(error: unknown, file: string): unknown {
  if (!(error instanceof PdfError)) return error
  if (error.pdfName === 'PasswordException') {
    return new FsError(`cannot read ${file}: the PDF is encrypted with a password — decrypt it (e.g. qpdf --decrypt) and read the copy`, 'FS_NOT_TEXT', { cause: error })
  }
  const reason = error.message.trim().replace(/\s+/gu, ' ').slice(0, 200) || error.pdfName
  return new FsError(`cannot read ${file}: corrupt PDF (${reason}) — regenerate it, or read another file`, 'FS_NOT_TEXT', { cause: error })
}

/** A file that only looked like a PDF (a late or missing header) and is not one: the text reader's. */
function asText(request: ReadRequest, file: string): Promise<ReadResult> {
  if (request.options.pages !== undefined) {
    throw new HarnessError(`pages applies to PDF files; ${file} is text — omit pages, and use offset/limit for lines`, 'INVALID_ARGS')
  }
  return readText(request)
}

async function bytesOf(request: ReadRequest, evidence: PdfEvidence | undefined): Promise<Uint8Array | undefined> {
  try {
    return await request.source.bytes()
  } catch (error) {
    // Over maxFileBytes, a file without a proper header is not worth the doubt: it is read as text.
    if (evidence !== 'header' && error instanceof FsError && error.code === 'FS_TOO_LARGE') return undefined
    throw error
  }
}

const pools = new WeakMap<Context, PdfPool>()

/** The plugin instance's parse workers, ended when it is disposed. */
function poolOf(ctx: Context): PdfPool {
  let pool = pools.get(ctx)
  if (pool === undefined) {
    const created = new PdfPool()
    try {
      ctx.effect(() => () => {
        created.close()
        pools.delete(ctx)
      }, 'read_file PDF workers')
    } catch (error) {
      // The plugin was disposed while this call was on its way.
      throw fsAborted('read', { cause: error })
    }
    pools.set(ctx, created)
    pool = created
  }
  return pool
}

export async function readPdf(request: ReadRequest): Promise<ReadResult> {
  const { source, call, config, options } = request
  const file = echo(source.target.displayPath)
  const evidence = pdfEvidence(await source.head())
  const data = await bytesOf(request, evidence)
  if (data === undefined) return await asText(request, file)
  const limits = { memoryMB: config.pdfMemoryMB, timeoutMs: config.pdfTimeoutMs }
  const thread = new PdfParse(poolOf(call.ctx), data, limits, call.exec.signal, file)
  let keep = false
  try {
    let total: number
    try {
      total = await thread.opened
    } catch (error) {
      if (evidence !== 'header' && error instanceof PdfError) {
        await thread.end(true)
        return await asText(request, file)
      }
      throw error
    }
    const wanted = options.pages === undefined
      ? Array.from({ length: Math.min(DEFAULT_PAGES, total) }, (_, i) => i + 1)
      : parsePages(options.pages, total, file)
    const pages: PdfValue['pages'] = []
    const maxBytes = options.maxBytes ?? config.maxBytes
    let bytes = 0
    for (const number of wanted.slice(0, MAX_PAGES)) {
      const text = await thread.page(number, maxBytes)
      const size = Buffer.byteLength(text, 'utf8') + 20
      // The first page is always shown (cut if alone too large), so paging never stalls.
      if (pages.length > 0 && bytes + size > maxBytes) break
      pages.push({ number, text: pages.length === 0 ? cutToBytes(text, maxBytes, 'page cut') : text })
      bytes += size
    }
    const last = pages.at(-1)?.number ?? total
    const rest = wanted.slice(pages.length, pages.length + MAX_PAGES)
    const span = Math.max(1, Math.min(wanted.length, MAX_PAGES))
    const next = rest.length > 0 ? pageRanges(rest)
      : last < total ? pageRanges(Array.from({ length: Math.min(span, total - last) }, (_, i) => last + 1 + i))
        : undefined
    const value: PdfValue = { kind: 'pdf', path: source.target.displayPath, pages_total: total, pages }
    keep = true
    return { value: next === undefined ? value : { ...value, next }, observe: false }
  } catch (error) {
    // A wrong `pages` is the caller's: the thread is fine to keep.
    keep = error instanceof HarnessError
    throw pdfFailure(error, file)
  } finally {
    await thread.end(keep)
  }
}
