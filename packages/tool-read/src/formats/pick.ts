/** Which room reads a file: the content sniffs in order, the reader table, and the checks that the arguments fit it. */

import { HarnessError } from '@deepseek-ai/dsh-llm'
import { echo } from '@gencode-ai/dsh-tool-common'
import { readImage } from './image/reader.ts'
import { imageFormatForPath, sniffImage } from './image/sniff.ts'
import { readNotebook } from './notebook/reader.ts'
import { isNotebook } from './notebook/sniff.ts'
import { readPdf } from './pdf/reader.ts'
import { isPdf } from './pdf/sniff.ts'
import type { Reader, ReadRequest, ReadResult } from '../reader.ts'
import { readText } from './text/reader.ts'

type Kind = 'text' | 'image' | 'notebook' | 'pdf'

const READERS: Readonly<Record<Kind, Reader>> = { text: readText, image: readImage, notebook: readNotebook, pdf: readPdf }
const KIND_NAMES: Readonly<Record<Kind, string>> = { text: 'text', image: 'an image', notebook: 'a notebook', pdf: 'a PDF' }

/** A PDF or an image by content whatever the name (BMP's two-byte magic only with its extension), a notebook by name, else text. */
function pick(head: Uint8Array, path: string, encoding: string | undefined): Kind {
  if (isPdf(head, encoding)) return 'pdf'
  const sniffed = sniffImage(head)
  if (imageFormatForPath(path) !== undefined || (sniffed !== undefined && sniffed !== 'bmp')) return 'image'
  return isNotebook(path) ? 'notebook' : 'text'
}

/** The reader the content sniff picks; with no bytes left in the step's budget, text of any kind is not read (images are). */
export async function readAs(request: ReadRequest): Promise<ReadResult> {
  const { source, options } = request
  const kind = pick(await source.head(), source.target.displayPath, options.encoding)
  const file = `${echo(source.target.displayPath)} is ${KIND_NAMES[kind]}`
  if (options.pages !== undefined && kind !== 'pdf') {
    throw new HarnessError(`pages applies to PDF files; ${file} — omit pages, and use offset/limit for lines`, 'INVALID_ARGS')
  }
  if (options.encoding !== undefined && kind !== 'text') {
    throw new HarnessError(`encoding applies to text files; ${file} — omit encoding`, 'INVALID_ARGS')
  }
  if (options.maxBytes === 0 && kind !== 'image') {
    const where = kind !== 'pdf' ? { offset: options.offset } : options.pages === undefined ? {} : { pages: options.pages }
    return { value: { kind: 'deferred', path: source.target.displayPath, ...where }, observe: false }
  }
  return await READERS[kind](request)
}
