/** Pure: canonical value -> the text (and images) the model receives, each variant by its own room's renderer. */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { renderImage } from './formats/image/render.ts'
import { renderNotebook } from './formats/notebook/render.ts'
import { renderPdf } from './formats/pdf/render.ts'
import { renderText } from './formats/text/render.ts'
import { renderDeferred, renderUnchanged } from './session/render.ts'
import type { ReadValue } from './value.ts'

const text = (body: string): ContentBlock[] => [{ type: 'text', text: body }]

export function renderValue(value: ReadValue): ContentBlock[] {
  switch (value.kind) {
    case 'text': return text(renderText(value))
    case 'notebook': return renderNotebook(value)
    case 'pdf': return text(renderPdf(value))
    case 'image': return renderImage(value)
    case 'unchanged': return text(renderUnchanged(value))
    case 'deferred': return text(renderDeferred(value))
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
