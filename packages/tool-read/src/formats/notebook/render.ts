/** Pure: the notebook room's value -> the text in the README's layout, each cell's attached plots right after it. */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { attachmentRef } from '../image/render.ts'
import { STEP_SPENT } from '../notes.ts'
import type { NotebookCell, NotebookValue } from './value.ts'

const KNOWN_TYPES = new Set(['code', 'markdown', 'raw'])

/** One cell in the README's notebook layout (no trailing blank line). */
export function formatCell(cell: NotebookCell): string {
  const parts = [`## Cell ${cell.index} [${cell.type}]${KNOWN_TYPES.has(cell.type) ? '' : ' (unknown cell type)'}`]
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

/** The header, exactly as the README gives it: `# N cells` whatever N (singular forms are list_directory's only). */
function notebookHeader(language: string, totalCells: number): string {
  return `# Jupyter Notebook (${language})\n# ${totalCells} cells`
}

/** The notebook's text, with each cell's attached plots as image blocks right after that cell. */
export function renderNotebook(value: NotebookValue): ContentBlock[] {
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
