/** The PDF parse thread: pdf.js (unpdf's build, pdfjs-dist's CMaps and fonts) opens the bytes it is sent and answers page requests. */

import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { parentPort } from 'node:worker_threads'
// unpdf's typings import pdf.js's without extensions, which NodeNext reads as `any`; pdfjs-dist, the same release, types them.
import type { PDFDocumentProxy } from 'pdfjs-dist'
import { withoutAttachmentEncryption } from './encrypt.ts'
import type { PdfReply, PdfRequest } from './protocol.ts'

const port = parentPort
if (port === null) throw new Error('pdf-worker.ts runs as a worker thread')

/** pdf.js's character maps (CJK and CID encodings) and the 14 standard fonts' data, read from disk (no network). */
function dataDirs(): { cMapUrl: string, standardFontDataUrl: string } {
  const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'))
  return { cMapUrl: `${join(root, 'cmaps')}/`, standardFontDataUrl: `${join(root, 'standard_fonts')}/` }
}

function failure(error: unknown): PdfReply {
  const name = (error as { name?: unknown } | null)?.name
  const message = error instanceof Error ? error.message : (error as { message?: unknown } | null)?.message
  return { type: 'error', name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : String(error) }
}

/** Items of pdf.js's text content (strings, and marked content without `str`), read until `maxChars` (the rest is never shown). */
async function pageText(stream: ReadableStream<{ items: object[] }>, maxChars: number): Promise<string> {
  const reader = stream.getReader()
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      for (const item of value.items) {
        if ('str' in item && typeof item.str === 'string') text += item.str
        if ('hasEOL' in item && item.hasEOL === true) text += '\n'
      }
      if (text.length > maxChars) break
    }
  } finally {
    await reader.cancel().catch(() => {})
  }
  return text.replace(/[ \t]+\n/gu, '\n').trim()
}

const post = (reply: PdfReply): void => { port.postMessage(reply) }
const { getDocument } = await (await import('unpdf')).getResolvedPDFJS()
const dirs = dataDirs()
let pdf: PDFDocumentProxy | undefined

async function open(data: Uint8Array): Promise<NonNullable<typeof pdf>> {
  const task = getDocument({ data, verbosity: 0, isEvalSupported: false, useSystemFonts: true, stopAtErrors: false, ...dirs })
  // A file pdf.js cannot open leaves its loading task behind unless destroyed (this thread serves the next call).
  return await task.promise.catch(async (error: unknown) => {
    await task.destroy()
    throw error
  })
}

async function answer(request: PdfRequest): Promise<PdfReply> {
  if (request.type === 'open') {
    // pdf.js detaches the bytes it opens: keep a copy only when encryption may cover attachments alone.
    const spare = Buffer.from(request.data.buffer, request.data.byteOffset, request.data.byteLength).includes('/EFF') ? Uint8Array.from(request.data) : undefined
    try {
      pdf = await open(request.data)
    } catch (error) {
      const plain = spare !== undefined && (error as { name?: unknown } | null)?.name === 'PasswordException' ? withoutAttachmentEncryption(spare) : undefined
      if (plain === undefined) throw error
      pdf = await open(plain)
    }
    return { type: 'open', total: pdf.numPages }
  }
  if (request.type === 'close') {
    await pdf?.destroy()
    pdf = undefined
    return { type: 'closed' }
  }
  if (pdf === undefined) throw new Error('no document is open')
  const page = await pdf.getPage(request.number)
  const text = await pageText(page.streamTextContent() as ReadableStream<{ items: object[] }>, request.maxChars)
  page.cleanup()
  return { type: 'page', number: request.number, text }
}

post({ type: 'ready' })
// One request at a time: the host waits for each reply before it sends the next.
port.on('message', (request: PdfRequest) => {
  answer(request).then(post, (error: unknown) => { post(failure(error)) })
})
