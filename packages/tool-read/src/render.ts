/** Pure: canonical value -> the text (and image) the model receives. */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { AttachmentId, type ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import { formatBytes, quoted } from '@gencode-ai/dsh-tool-common'
import { FORMAT_NAMES } from './formats/image/reader.ts'
import { formatCell, notebookHeader } from './formats/notebook/reader.ts'
import { isUnicodeEditable } from './formats/text/encoding.ts'
import { NO_TEXT_LAYER, pageRanges } from './formats/pdf/reader.ts'
import type { Attached, ImageValue, NotebookValue, PdfValue, ReadValue, TextValue } from './value.ts'
import { numberWidth } from './formats/text/window.ts'

/** read_file's documented unit names ('48.1 KB'), on the shared binary steps. */
const UNITS = ['bytes', 'KB', 'MB'] as const

export const sizeOf = (bytes: number): string => formatBytes(bytes, UNITS)

/** A file in another encoding than UTF-8/UTF-16, or a guess: named (and said to be a guess), with what an edit must respect. */
function encodingNote({ encoding, alternatives, first_invalid_line: firstInvalid }: TextValue): string {
  if (firstInvalid !== undefined) {
    const where = firstInvalid === null ? '' : `, the first on line ${firstInvalid}`
    return `\n\n(Bytes that are not UTF-8 are shown as \uFFFD${where}; edit/write would not keep them.)`
  }
  const editable = isUnicodeEditable(encoding)
  if (editable && alternatives === undefined) return ''
  const name = encoding.startsWith('utf-') ? encoding.toUpperCase() : encoding
  const keep = editable ? '' : ' Edits must keep this encoding: edit/write would save UTF-8.'
  if (alternatives === undefined) return `\n\n(Decoded from ${name}.${keep})`
  const pass = alternatives.length === 0 ? 'the file\'s encoding as encoding' : `encoding ${alternatives.map((other) => `"${other}"`).join(' or ')}`
  return `\n\n(Decoded from ${name}, a guess: if the text looks garbled, pass ${pass}.${keep})`
}

/** Said after a window the step's shared budget ended. */
const STEP_SPENT = 'this step\'s reads reached maxBytesPerStep'

function windowText(value: TextValue): string {
  const { start_line: startLine, lines, total_lines: totalLines, total_exact: totalExact } = value
  if (lines.length === 0 && value.step_capped === true) return `(No lines shown: ${STEP_SPENT}. Use offset=${startLine} in a later step.)`
  if (lines.length === 0) {
    return totalLines === 0 ? '(File is empty.)' : `(Offset ${startLine} is past the end: the file has ${totalLines} ${totalLines === 1 ? 'line' : 'lines'}. Use offset=${totalLines} to read its last line.)`
  }
  const last = startLine + lines.length - 1
  const width = numberWidth(startLine, lines.length, totalLines, totalExact)
  const body = lines.map((line, i) => `${String(startLine + i).padStart(width)}\t${line}`).join('\n')
  if (totalExact && last >= totalLines) return body
  const total = totalExact ? `${totalLines}` : `about ${totalLines} (estimated from the file size)`
  const step = value.step_capped === true ? `; ${STEP_SPENT}, so continue in a later step` : ''
  return `${body}\n\n(Showing lines ${startLine}-${last} of ${total}. Use offset=${last + 1} to continue${step}.)`
}

/** The notebook's text, with each cell's attached plots as image blocks right after that cell. */
function renderNotebook(value: NotebookValue): ContentBlock[] {
  const header = notebookHeader(value.language, value.total_cells)
  if (value.cells.length === 0) {
    const text = value.total_cells === 0 ? header : `${header}\n\n(Offset ${value.start_cell} is past the end: the notebook has ${value.total_cells} ${value.total_cells === 1 ? 'cell' : 'cells'}.)`
    return [{ type: 'text', text }]
  }
  const blocks: ContentBlock[] = []
  let text = header
  for (const cell of value.cells) {
    // After an image block, the next text block starts with its cell.
    text += `${text === '' ? '' : '\n\n'}${formatCell(cell)}`
    for (const { image } of cell.outputs) {
      if (image?.attached == null) continue
      if (text !== '') blocks.push({ type: 'text', text })
      blocks.push({ type: 'image', attachment: attachmentRef(image.attached) })
      text = ''
    }
  }
  const last = value.start_cell + value.cells.length - 1
  const step = value.step_capped === true ? `; ${STEP_SPENT}, so continue in a later step` : ''
  if (last < value.total_cells) text += `${text === '' ? '' : '\n\n'}(Showing cells ${value.start_cell}-${last} of ${value.total_cells}. Use offset=${last + 1} to continue${step}.)`
  if (text !== '') blocks.push({ type: 'text', text })
  return blocks
}

function renderPdf(value: PdfValue): string {
  const body = value.pages.map((page) => `--- Page ${page.number} ---\n${page.text === '' ? NO_TEXT_LAYER : page.text}`).join('\n\n')
  if (value.next === undefined) return body
  const shown = pageRanges(value.pages.map((page) => page.number))
  return `${body}\n\n(Showing pages ${shown} of ${value.pages_total}. Use pages="${value.next}" to continue.)`
}

function renderImage(value: ImageValue): string {
  const animation = value.animated === undefined ? '' : `, animated (${value.animated.frames} frames)`
  const head = `${FORMAT_NAMES[value.format]} image, ${value.width}x${value.height} px, ${sizeOf(value.bytes)}${animation}`
  const shown = value.attached
  if (shown === null) {
    const why = value.reason === 'no-image-input' ? 'the current model does not take image input' : 'no attachment store is composed'
    return `${head}. Not attached: ${why}.`
  }
  const what = value.animated === undefined ? 'attached' : `frame ${value.animated.shown} attached`
  const size = `${shown.media_type}, ${sizeOf(shown.bytes)}`
  if (shown.width === value.width && shown.height === value.height) return `${head}; ${what} as ${size}.`
  const x = (value.width / shown.width).toFixed(2)
  const y = (value.height / shown.height).toFixed(2)
  const scale = x === y ? `multiply coordinates by ${x}` : `multiply x by ${x} and y by ${y}`
  return `${head}; ${what} downscaled to ${shown.width}x${shown.height} px (${size}): ${scale} to locate features in the original.`
}

/** The value's record of an attachment as the host's image block takes it. */
function attachmentRef({ attachment_id: id, media_type: mediaType, bytes, width, height, name }: Attached): ImageAttachmentRef {
  return { attachmentId: AttachmentId(id), mediaType, bytes, width, height, ...name === undefined ? {} : { name } }
}

export function renderValue(value: ReadValue): ContentBlock[] {
  switch (value.kind) {
    case 'text': return [{ type: 'text', text: windowText(value) + encodingNote(value) }]
    case 'notebook': return renderNotebook(value)
    case 'pdf': return [{ type: 'text', text: renderPdf(value) }]
    case 'image': {
      const text = renderImage(value)
      if (value.attached === null) return [{ type: 'text', text }]
      return [{ type: 'text', text }, { type: 'image', attachment: attachmentRef(value.attached) }]
    }
    case 'unchanged': return [{ type: 'text', text: `(Unchanged: ${value.unit} ${value.shown} as in call ${value.call_id} above.)` }]
    case 'deferred': {
      const where = value.pages !== undefined ? ` with pages=${quoted(value.pages)}` : value.offset === undefined ? '' : ` with offset=${value.offset}`
      return [{ type: 'text', text: `(Not read: ${STEP_SPENT}. Read it in a later step${where}.)` }]
    }
  }
}

/** A read of a file that grew while it was read stopped at its size when opened: said last, with what the counts cover. */
export function withGrowth(blocks: ContentBlock[], value: ReadValue): ContentBlock[] {
  if (value.kind === 'unchanged' || value.kind === 'deferred' || value.grew === undefined) return blocks
  const note = `(The file grew from ${value.grew.from} to ${value.grew.to} bytes while it was read: this read, counts included, covers its first ${value.grew.from} bytes.)`
  const last = blocks.at(-1)
  if (last?.type === 'text') return [...blocks.slice(0, -1), { type: 'text', text: `${last.text}\n\n${note}` }]
  return [...blocks, { type: 'text', text: note }]
}
