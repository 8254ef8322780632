/** The variants the session rules answer with instead of a read: `unchanged` (named, not shown) and `deferred` (not read). */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object, tag } from '@gencode-ai/dsh-tool-common'
import { IDENTITY, string } from '../formats/fields.ts'

/** The same window, bytes and file as an earlier call whose result the model still has: named instead of shown again. */
export const UNCHANGED = object({
  kind: tag('unchanged'),
  path: string,
  /** The earlier call, by the host's call id. */
  call_id: string,
  unit: { type: 'string', enum: ['lines', 'pages'], required: true },
  /** What that call showed, e.g. `1-200` (lines) or `1-3,5` (pages). */
  shown: string,
  ...IDENTITY,
})

/** Nothing read: this step's reads had spent maxBytesPerStep. Where to start in a later step: `offset`, or `pages` (a PDF). */
export const DEFERRED = object({
  kind: tag('deferred'),
  path: string,
  offset: { type: 'integer' },
  pages: { type: 'string' },
})

export type UnchangedValue = InferValue<typeof UNCHANGED>
export type DeferredValue = InferValue<typeof DEFERRED>
