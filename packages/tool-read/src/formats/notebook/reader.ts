/** The notebook reader: validated JSON (a malformed one is an error saying what is wrong), cells in the README's layout, plots attached. */

import { basename } from 'node:path'
import type { AttachmentStore } from '@deepseek-ai/dsh-attachment'
import { FsError } from '@deepseek-ai/dsh-fs'
import { checkFsAborted, echo } from '@gencode-ai/dsh-tool-common'
import { attachImage, inspect, routeTakesImages } from '../image/reader.ts'
import { sniffImage } from '../image/sniff.ts'
import { MalformedNotebook, parseNotebook, type ParsedCell, type ParsedOutput } from './parse.ts'
import type { Call, ReadRequest, ReadResult } from '../../reader.ts'
import type { Source } from '../../source.ts'
import type { Attached } from '../image/value.ts'
import type { NotebookCell, NotebookOutput, NotebookValue } from './value.ts'
import { cutToBytes } from '../text/window.ts'
import { formatCell } from './render.ts'

type ParsedWindow = { cells: ParsedCell[], byteCapped: boolean }

/** Bytes reserved in the text budget per image output, for its marker's longest form. */
const MARKER_BYTES = 120

/** The cells from `offset`, at most `limit`, within `maxBytes` of text; the first always, cut when alone too large. */
function windowCells(cells: readonly ParsedCell[], offset: number, limit: number, maxBytes: number): ParsedWindow {
  const out: ParsedCell[] = []
  let bytes = 0
  for (const cell of cells.slice(offset - 1, offset - 1 + limit)) {
    const size = Buffer.byteLength(formatCell(cell), 'utf8') + 2 + MARKER_BYTES * cell.outputs.filter((entry) => entry.raster !== undefined).length
    if (out.length > 0 && bytes + size > maxBytes) return { cells: out, byteCapped: true }
    out.push(out.length === 0 && size > maxBytes ? cutCell(cell, maxBytes) : cell)
    bytes += size
  }
  return { cells: out, byteCapped: false }
}

function cutCell(cell: ParsedCell, maxBytes: number): ParsedCell {
  const share = Math.max(256, Math.floor(maxBytes / (1 + cell.outputs.length)))
  return {
    ...cell,
    source: cutToBytes(cell.source, share, 'cut'),
    outputs: cell.outputs.map((entry) => ({ ...entry, text: cutToBytes(entry.text, share, 'cut') })),
  }
}

/** What the call may still attach: the store's per-message image count and bytes. */
type ImageBudget = { store: AttachmentStore, images: number, bytes: number }

/** One image output: attached within the budget, else its marker says why not. */
async function imageOutput(source: Source, signal: AbortSignal, cell: ParsedCell, n: number, raster: NonNullable<ParsedOutput['raster']>,
  budget: ImageBudget): Promise<{ text: string, attached: Attached | null }> {
  if (budget.images <= 0 || budget.bytes <= 0) {
    return { text: `[Image output: not attached, this call's image budget is spent; read offset=${cell.index} to see it]`, attached: null }
  }
  const format = raster.mediaType === 'image/png' ? 'png' : 'jpeg'
  const data = Buffer.from(raster.base64.replace(/\s+/gu, ''), 'base64')
  const where = `${source.target.displayPath}, cell ${cell.index}`
  try {
    if (sniffImage(data) !== format) throw new Error(`the bytes are not ${raster.mediaType}`)
    const decoded = await inspect(where, format, data)
    const name = `${basename(source.target.displayPath)}-cell${cell.index}-${n}.${format === 'png' ? 'png' : 'jpg'}`
    const byteCap = Math.min(budget.store.imageLimits.maxImageBytes, budget.bytes)
    const attached = await attachImage(budget.store, where, name, data, format, decoded, byteCap, signal)
    budget.images--
    budget.bytes -= attached.bytes
    const scaled = attached.width === decoded.width ? '' : ` downscaled to ${attached.width}x${attached.height} px`
    return { text: `[Image output: ${decoded.width}x${decoded.height} px, attached as ${attached.media_type}${scaled}]`, attached }
  } catch (error) {
    // One plot that cannot be attached is described; the notebook is still read.
    if (!(error instanceof Error) || (error instanceof FsError && error.code === 'FS_ABORTED')) throw error
    // A failed attempt spends the budget as an attached image would: decoding is what costs, and a notebook can hold
    // hundreds of plots that decode for seconds each and then fail.
    budget.images--
    budget.bytes -= data.length
    const reason = error.message.replace(/^cannot read "[^"]*"(?: \(\d+ characters\))?: /u, '')
    return { text: `[Image output: not attached (${reason.length > 200 ? `${reason.slice(0, 200)}…` : reason})]`, attached: null }
  }
}

/** The window's cells for the value: image outputs attached in order while the budget lasts (when the route takes images). */
async function withImages(source: Source, { ctx, exec }: Call, cells: ParsedCell[]): Promise<NotebookCell[]> {
  const store = ctx.get('attachments')
  const hasImages = cells.some((cell) => cell.outputs.some((entry) => entry.raster !== undefined))
  const budget = store !== undefined && hasImages && await routeTakesImages(ctx, exec)
    ? { store, images: store.imageLimits.maxImagesPerMessage, bytes: store.imageLimits.maxMessageImageBytes }
    : undefined
  const out: NotebookCell[] = []
  for (const cell of cells) {
    const outputs: NotebookOutput[] = []
    let n = 0
    for (const { raster, ...entry } of cell.outputs) {
      if (raster === undefined || budget === undefined) {
        outputs.push(raster === undefined ? entry : { ...entry, image: { media_type: raster.mediaType, attached: null } })
        continue
      }
      checkFsAborted(exec.signal, 'read')
      const { text, attached } = await imageOutput(source, exec.signal, cell, ++n, raster, budget)
      outputs.push({ ...entry, text: entry.text.replace('[Image output]', text), image: { media_type: raster.mediaType, attached } })
    }
    out.push({ ...cell, outputs })
  }
  return out
}

export async function readNotebook({ source, call, config, options }: ReadRequest): Promise<ReadResult> {
  const { target } = source
  const bytes = await source.bytes()
  let notebook
  try {
    notebook = parseNotebook(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    if (!(error instanceof MalformedNotebook || error instanceof TypeError)) throw error
    const reason = error instanceof MalformedNotebook ? error.message : 'it is not UTF-8 text'
    throw new FsError(`cannot read ${echo(target.displayPath)}: malformed notebook: ${reason}`, 'FS_NOT_TEXT')
  }
  const { language, cells } = notebook
  const window = windowCells(cells, options.offset, options.limit, options.maxBytes ?? config.maxBytes)
  const value: NotebookValue = {
    kind: 'notebook', path: target.displayPath, language, start_cell: options.offset, total_cells: cells.length,
    cells: await withImages(source, call, window.cells), byte_capped: window.byteCapped,
  }
  return { value, observe: true }
}
