/** nbformat 4, and 2/3 (worksheets), parsed into one cell list as Jupyter shows it; a structural fault is a MalformedNotebook. */

export class MalformedNotebook extends Error {}

type RasterType = 'image/png' | 'image/jpeg'

export type ParsedOutput = {
  type: string
  text: string
  /** A PNG/JPEG output's base64 bytes, to attach; never part of the value. */
  raster?: { mediaType: RasterType, base64: string }
}

export type ParsedCell = {
  index: number
  type: string
  execution_count?: number | null
  source: string
  outputs: ParsedOutput[]
}

/** Bytes of traceback kept per error output (its end: the innermost frames and the error line). */
const TRACEBACK_BYTES = 4096

/** nbformat 3 names its output data by short keys. */
const V3_KEYS: Readonly<Record<string, string>> = {
  text: 'text/plain', png: 'image/png', jpeg: 'image/jpeg', svg: 'image/svg+xml', html: 'text/html',
  latex: 'text/latex', json: 'application/json', javascript: 'application/javascript', pdf: 'application/pdf',
}

/** nbformat 3 output types by their nbformat 4 names. */
const V3_OUTPUTS: Readonly<Record<string, string>> = { pyout: 'execute_result', pyerr: 'error' }

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** nbformat multiline strings: a string or a list of strings. */
function multiline(value: unknown, where: string): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join('')
  throw new MalformedNotebook(`${where} must be a string or a list of strings`)
}

/** Terminal escapes (colours in IPython tracebacks, cursor moves in progress output) removed. */
function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/gu, '')
}

/** The traceback's end within TRACEBACK_BYTES, saying how many lines before it were cut. */
function tracebackTail(lines: string[]): string {
  const kept: string[] = []
  let bytes = 0
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? ''
    bytes += Buffer.byteLength(line, 'utf8') + 1
    if (bytes > TRACEBACK_BYTES && kept.length > 0) {
      kept.unshift(`[… ${i + 1} earlier traceback ${i === 0 ? 'line' : 'lines'} cut]`)
      break
    }
    kept.unshift(line)
  }
  return kept.join('\n')
}

function output(raw: unknown, where: string, v3: boolean): ParsedOutput {
  if (!isObject(raw)) throw new MalformedNotebook(`${where} must be an object`)
  const given = raw.output_type
  if (typeof given !== 'string') throw new MalformedNotebook(`${where}.output_type must be a string`)
  const type = v3 ? V3_OUTPUTS[given] ?? given : given
  switch (type) {
    case 'stream':
      return { type, text: stripAnsi(multiline(raw.text ?? '', `${where}.text`)) }
    case 'execute_result':
    case 'display_data': {
      const data: unknown = v3 ? Object.fromEntries(Object.entries(raw).flatMap(([key, value]) => {
        const mime = V3_KEYS[key]
        return mime === undefined ? [] : [[mime, value]]
      })) : raw.data ?? {}
      if (!isObject(data)) throw new MalformedNotebook(`${where}.data must be an object`)
      const parts: string[] = []
      if (data['text/plain'] !== undefined) parts.push(stripAnsi(multiline(data['text/plain'], `${where}.data["text/plain"]`)))
      const mediaType = (['image/png', 'image/jpeg'] as const).find((mime) => data[mime] !== undefined)
      if (Object.keys(data).some((mime) => mime.startsWith('image/'))) parts.push('[Image output]')
      const result: ParsedOutput = { type, text: parts.length > 0 ? parts.join('\n') : '[Output data]' }
      if (mediaType !== undefined) result.raster = { mediaType, base64: multiline(data[mediaType], `${where}.data["${mediaType}"]`) }
      return result
    }
    case 'error': {
      const head = `Error: ${typeof raw.ename === 'string' ? raw.ename : ''}: ${typeof raw.evalue === 'string' ? raw.evalue : ''}`
      const traceback = Array.isArray(raw.traceback) ? raw.traceback.filter((line) => typeof line === 'string') : []
      // IPython's traceback entries hold several lines each, coloured.
      const lines = stripAnsi(traceback.join('\n')).split('\n')
      return { type, text: traceback.length === 0 ? head : `${head}\n${tracebackTail(lines)}` }
    }
    default:
      return { type, text: '[Unknown output type]' }
  }
}

function cell(raw: unknown, i: number, v3: boolean): ParsedCell {
  const where = `cells[${i}]`
  if (!isObject(raw)) throw new MalformedNotebook(`${where} must be an object`)
  const given = typeof raw.cell_type === 'string' ? raw.cell_type : 'unknown'
  if (v3 && given === 'heading') {
    // Jupyter shows an nbformat 3 heading cell as the markdown heading it converts it to.
    const level = Number.isInteger(raw.level) ? Math.min(6, Math.max(1, raw.level as number)) : 1
    return { index: i + 1, type: 'markdown', source: `${'#'.repeat(level)} ${multiline(raw.source ?? '', `${where}.source`)}`, outputs: [] }
  }
  if (given !== 'code' && given !== 'markdown' && given !== 'raw') {
    // Shown as what it is; one odd cell does not refuse the notebook.
    const source = typeof raw.source === 'string' || Array.isArray(raw.source) ? multiline(raw.source, `${where}.source`) : ''
    return { index: i + 1, type: given, source, outputs: [] }
  }
  const source = multiline((v3 && given === 'code' ? raw.input : raw.source) ?? '', `${where}.${v3 && given === 'code' ? 'input' : 'source'}`)
  if (given !== 'code') return { index: i + 1, type: given, source, outputs: [] }
  const countKey = v3 ? 'prompt_number' : 'execution_count'
  const count = raw[countKey] ?? null
  if (count !== null && !Number.isInteger(count)) throw new MalformedNotebook(`${where}.${countKey} must be an integer or null`)
  const outputs = raw.outputs ?? []
  if (!Array.isArray(outputs)) throw new MalformedNotebook(`${where}.outputs must be a list`)
  const parsed = outputs.map((entry, j) => output(entry, `${where}.outputs[${j}]`, v3))
  return { index: i + 1, type: given, execution_count: count as number | null, source, outputs: parsed }
}

export function parseNotebook(text: string): { language: string, cells: ParsedCell[] } {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch (error) {
    throw new MalformedNotebook(`invalid JSON (${(error as Error).message})`)
  }
  if (!isObject(root)) throw new MalformedNotebook('the top level must be a JSON object')
  // nbformat 2 and 3 keep their cells in worksheets (one, in practice).
  const v3 = !Array.isArray(root.cells) && (Array.isArray(root.worksheets) || (typeof root.nbformat === 'number' && root.nbformat < 4))
  let rawCells: unknown[]
  if (v3) {
    if (!Array.isArray(root.worksheets)) throw new MalformedNotebook(`nbformat ${String(root.nbformat)} notebook: "worksheets" must be a list`)
    rawCells = root.worksheets.flatMap((sheet, i) => {
      if (!isObject(sheet) || !Array.isArray(sheet.cells)) throw new MalformedNotebook(`worksheets[${i}].cells must be a list`)
      return sheet.cells as unknown[]
    })
  } else {
    if (!Array.isArray(root.cells)) throw new MalformedNotebook('"cells" must be a list')
    rawCells = root.cells
  }
  const cells = rawCells.map((raw, i) => cell(raw, i, v3))
  const metadata = isObject(root.metadata) ? root.metadata : {}
  const kernel = isObject(metadata.kernelspec) ? metadata.kernelspec : {}
  const info = isObject(metadata.language_info) ? metadata.language_info : {}
  // nbformat 3 names the language on each code cell.
  const cellLanguage = v3 ? rawCells.find((raw) => isObject(raw) && typeof raw.language === 'string') as { language: string } | undefined : undefined
  const language = typeof kernel.language === 'string' ? kernel.language
    : typeof info.name === 'string' ? info.name : cellLanguage?.language ?? 'unknown'
  return { language, cells }
}
