/** The notebook reader: validated JSON (a malformed one is an error saying what is wrong), cells in the seed's layout. */

import { FsError } from '@deepseek-ai/dsh-fs'
import type { ReadRequest, ReadResult } from './reader.ts'
import { cutToBytes } from './window.ts'

type NotebookOutput = { type: string, text: string }

export type NotebookCell = {
  /** 1-based cell number. */
  index: number
  type: 'code' | 'markdown' | 'raw'
  /** The execution count of a code cell; null when it never ran; absent for other cells. */
  execution_count?: number | null
  source: string
  outputs: NotebookOutput[]
}

export type CellWindow = { cells: NotebookCell[], byteCapped: boolean }

class MalformedNotebook extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** nbformat multiline strings: a string or a list of strings. */
function multiline(value: unknown, where: string): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join('')
  throw new MalformedNotebook(`${where} must be a string or a list of strings`)
}

function output(raw: unknown, where: string): NotebookOutput {
  if (!isObject(raw)) throw new MalformedNotebook(`${where} must be an object`)
  const type = raw.output_type
  if (typeof type !== 'string') throw new MalformedNotebook(`${where}.output_type must be a string`)
  switch (type) {
    case 'stream':
      return { type, text: multiline(raw.text ?? '', `${where}.text`) }
    case 'execute_result':
    case 'display_data': {
      const data = raw.data ?? {}
      if (!isObject(data)) throw new MalformedNotebook(`${where}.data must be an object`)
      const parts: string[] = []
      if (data['text/plain'] !== undefined) parts.push(multiline(data['text/plain'], `${where}.data["text/plain"]`))
      if (Object.keys(data).some((mime) => mime.startsWith('image/'))) parts.push('[Image output]')
      return { type, text: parts.length > 0 ? parts.join('\n') : '[Output data]' }
    }
    case 'error':
      return { type, text: `Error: ${String(raw.ename ?? '')}: ${String(raw.evalue ?? '')}` }
    default:
      return { type, text: '[Unknown output type]' }
  }
}

function parseNotebook(text: string): { language: string, cells: NotebookCell[] } {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch (error) {
    throw new MalformedNotebook(`invalid JSON (${(error as Error).message})`)
  }
  if (!isObject(root)) throw new MalformedNotebook('the top level must be a JSON object')
  if (!Array.isArray(root.cells)) throw new MalformedNotebook('"cells" must be a list')
  const metadata = isObject(root.metadata) ? root.metadata : {}
  const kernel = isObject(metadata.kernelspec) ? metadata.kernelspec : {}
  const info = isObject(metadata.language_info) ? metadata.language_info : {}
  const language = typeof kernel.language === 'string' ? kernel.language
    : typeof info.name === 'string' ? info.name : 'unknown'
  const cells = root.cells.map((raw, i): NotebookCell => {
    const where = `cells[${i}]`
    if (!isObject(raw)) throw new MalformedNotebook(`${where} must be an object`)
    const type = raw.cell_type
    if (type !== 'code' && type !== 'markdown' && type !== 'raw') {
      throw new MalformedNotebook(`${where}.cell_type must be "code", "markdown" or "raw" (got ${JSON.stringify(type)})`)
    }
    const source = multiline(raw.source ?? '', `${where}.source`)
    if (type !== 'code') return { index: i + 1, type, source, outputs: [] }
    const count = raw.execution_count ?? null
    if (count !== null && !Number.isInteger(count)) throw new MalformedNotebook(`${where}.execution_count must be an integer or null`)
    const outputs = raw.outputs ?? []
    if (!Array.isArray(outputs)) throw new MalformedNotebook(`${where}.outputs must be a list`)
    const parsed = outputs.map((entry, j) => output(entry, `${where}.outputs[${j}]`))
    return { index: i + 1, type, execution_count: count as number | null, source, outputs: parsed }
  })
  return { language, cells }
}

/** One cell in the seed's layout (no trailing blank line). */
export function formatCell(cell: NotebookCell): string {
  const parts = [`## Cell ${cell.index} [${cell.type}]`]
  if (cell.type === 'code') {
    parts.push(`In [${cell.execution_count ?? ' '}]:`, '```', cell.source.trim(), '```')
  } else {
    parts.push(cell.source.trim())
  }
  if (cell.outputs.length > 0) {
    parts.push('', '**Output:**', ...cell.outputs.map((entry) => entry.text.replace(/\s+$/u, '')))
  }
  return parts.join('\n')
}

/** The seed's header, exactly: `# N cells` whatever N (DESIGN keeps singular forms to list-dir). */
export function notebookHeader(language: string, totalCells: number): string {
  return `# Jupyter Notebook (${language})\n# ${totalCells} cells`
}

/** The cells from `offset`, at most `limit`, within `maxBytes` of text; the first always, cut when alone too large. */
function windowCells(cells: readonly NotebookCell[], offset: number, limit: number, maxBytes: number): CellWindow {
  const out: NotebookCell[] = []
  let bytes = 0
  for (const cell of cells.slice(offset - 1, offset - 1 + limit)) {
    const size = Buffer.byteLength(formatCell(cell), 'utf8') + 2
    if (out.length > 0 && bytes + size > maxBytes) return { cells: out, byteCapped: true }
    out.push(out.length === 0 && size > maxBytes ? cutCell(cell, maxBytes) : cell)
    bytes += size
  }
  return { cells: out, byteCapped: false }
}

function cutCell(cell: NotebookCell, maxBytes: number): NotebookCell {
  const share = Math.max(256, Math.floor(maxBytes / (1 + cell.outputs.length)))
  return {
    ...cell,
    source: cutToBytes(cell.source, share, 'cut'),
    outputs: cell.outputs.map((entry) => ({ ...entry, text: cutToBytes(entry.text, share, 'cut') })),
  }
}

export async function readNotebook({ source, config, options }: ReadRequest): Promise<ReadResult> {
  const { target } = source
  const bytes = await source.bytes()
  let notebook
  try {
    notebook = parseNotebook(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    if (!(error instanceof MalformedNotebook || error instanceof TypeError)) throw error
    const reason = error instanceof MalformedNotebook ? error.message : 'it is not UTF-8 text'
    throw new FsError(`cannot read "${target.displayPath}": malformed notebook: ${reason}`, 'FS_NOT_TEXT')
  }
  const { language, cells } = notebook
  const window = windowCells(cells, options.offset, options.limit, config.maxBytes)
  const value = { kind: 'notebook' as const, path: target.displayPath, language, startCell: options.offset, totalCells: cells.length }
  return { value: { ...value, ...window }, observe: true }
}
