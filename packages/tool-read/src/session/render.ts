/** Pure: the session's two answers -> the model's text: an unchanged window named, a deferred read's place to start. */

import { quoted } from '@gencode-ai/dsh-tool-common'
import { STEP_SPENT } from '../formats/notes.ts'
import type { DeferredValue, UnchangedValue } from './value.ts'

export function renderUnchanged(value: UnchangedValue): string {
  return `(Unchanged: ${value.unit} ${value.shown} as in call ${value.call_id} above.)`
}

export function renderDeferred(value: DeferredValue): string {
  const where = value.pages !== undefined ? ` with pages=${quoted(value.pages)}` : value.offset === undefined ? '' : ` with offset=${value.offset}`
  return `(Not read: ${STEP_SPENT}. Read it in a later step${where}.)`
}
