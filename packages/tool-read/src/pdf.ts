/** The PDF reader: text per page through pdf.js (unpdf's pure-JS build, loaded on first use), within MAX_PAGES and maxBytes. */

import { FsError } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { quoted } from './quote.ts'
import type { ReadRequest, ReadResult } from './reader.ts'
import { cutToBytes } from './window.ts'

const DEFAULT_PAGES = 10
const MAX_PAGES = 20

export type PdfRead = {
  type: 'pdf'
  pages_total: number
  pages: { number: number, text: string }[]
  /** The `pages` value that continues, when more remain. */
  next?: string
}

export function isPdf(head: Uint8Array): boolean {
  return Buffer.from(head.subarray(0, 5)).toString('latin1') === '%PDF-'
}

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

/** [1, 2, 3, 5] -> "1-3,5". */
export function pageRanges(pages: readonly number[]): string {
  const ranges: [number, number][] = []
  for (const page of pages) {
    const last = ranges.at(-1)
    if (last !== undefined && page === last[1] + 1) last[1] = page
    else ranges.push([page, page])
  }
  return ranges.map(([first, end]) => first === end ? `${first}` : `${first}-${end}`).join(',')
}

export const NO_TEXT_LAYER = '(No text layer on this page: it may be a scanned image.)'

/** Items of pdf.js's getTextContent (strings, and marked content without `str`). */
function pageText(items: readonly object[]): string {
  let text = ''
  for (const item of items) {
    if ('str' in item && typeof item.str === 'string') text += item.str
    if ('hasEOL' in item && item.hasEOL === true) text += '\n'
  }
  return text.replace(/[ \t]+\n/gu, '\n').trim()
}

export async function readPdf({ source, config, options }: ReadRequest): Promise<ReadResult> {
  const file = JSON.stringify(source.target.displayPath)
  const data = await source.bytes()
  const { getDocumentProxy } = await import('unpdf')
  let pdf
  try {
    // pdf.js takes ownership of (detaches) the buffer it is given: hand it a copy.
    pdf = await getDocumentProxy(Uint8Array.from(data), { verbosity: 0, isEvalSupported: false, stopAtErrors: false })
  } catch (error) {
    const name = (error as { name?: unknown } | null)?.name
    if (name === 'PasswordException') {
      throw new FsError(`cannot read ${file}: the PDF is encrypted with a password — decrypt it (e.g. qpdf --decrypt) and read the copy`, 'FS_NOT_TEXT', { cause: error })
    }
    const detail = error instanceof Error ? error.message : String(error)
    throw new FsError(`cannot read ${file}: corrupt PDF (${detail}) — regenerate it, or read another file`, 'FS_NOT_TEXT', { cause: error })
  }
  try {
    const total = pdf.numPages
    const wanted = options.pages === undefined
      ? Array.from({ length: Math.min(DEFAULT_PAGES, total) }, (_, i) => i + 1)
      : parsePages(options.pages, total, file)
    const pages: PdfRead['pages'] = []
    let bytes = 0
    for (const number of wanted.slice(0, MAX_PAGES)) {
      if (source.exec.signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
      const page = await pdf.getPage(number)
      const text = pageText((await page.getTextContent()).items)
      page.cleanup()
      const size = Buffer.byteLength(text, 'utf8') + 20
      // The first page is always shown (cut if alone too large), so paging never stalls.
      if (pages.length > 0 && bytes + size > config.maxBytes) break
      pages.push({ number, text: pages.length === 0 ? cutToBytes(text, config.maxBytes, 'page cut') : text })
      bytes += size
    }
    const last = pages.at(-1)?.number ?? total
    const rest = wanted.slice(pages.length, pages.length + MAX_PAGES)
    const span = Math.max(1, Math.min(wanted.length, MAX_PAGES))
    const next = rest.length > 0 ? pageRanges(rest)
      : last < total ? pageRanges(Array.from({ length: Math.min(span, total - last) }, (_, i) => last + 1 + i))
        : undefined
    const value = { kind: 'pdf' as const, path: source.target.displayPath, type: 'pdf' as const, pages_total: total, pages }
    return { value: next === undefined ? value : { ...value, next }, observe: false }
  } finally {
    await pdf.destroy()
  }
}
