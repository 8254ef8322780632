/** Pure: the text room's value -> the numbered window the model receives, with its footer and encoding note. */

import { STEP_SPENT } from '../notes.ts'
import { isUnicodeEditable } from './encoding.ts'
import type { TextValue } from './value.ts'
import { numberWidth } from './window.ts'

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

export function renderText(value: TextValue): string {
  return windowText(value) + encodingNote(value)
}
