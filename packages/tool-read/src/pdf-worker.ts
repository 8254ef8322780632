/** The PDF parse thread: pdf.js (unpdf's build, with pdfjs-dist's CMaps and standard fonts) opens the bytes it is given and answers page requests. */

import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import type { PdfReply, PdfRequest, PdfStart } from './pdf-protocol.ts'

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

const start = workerData as PdfStart
const post = (reply: PdfReply): void => port.postMessage(reply)

try {
  const { getDocumentProxy } = await import('unpdf')
  const pdf = await getDocumentProxy(start.data, { verbosity: 0, isEvalSupported: false, stopAtErrors: false, ...dataDirs() })
  post({ type: 'open', total: pdf.numPages })
  port.on('message', (request: PdfRequest) => {
    void (async () => {
      const page = await pdf.getPage(request.number)
      const text = await pageText(page.streamTextContent() as ReadableStream<{ items: object[] }>, request.maxChars)
      page.cleanup()
      post({ type: 'page', number: request.number, text })
    })().catch((error: unknown) => { post(failure(error)) })
  })
} catch (error) {
  post(failure(error))
}
