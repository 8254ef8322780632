/** The PDF room's variant of the read_file value: pages' text. */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object, tag } from '@gencode-ai/dsh-tool-common'
import { GREW, IDENTITY, integer, string } from '../fields.ts'

export const PDF = object({
  kind: tag('pdf'),
  path: string,
  pages_total: integer,
  pages: { type: 'array', items: object({ number: integer, text: string }), required: true },
  /** The `pages` value that continues, when more remain. */
  next: { type: 'string' },
  ...GREW,
  ...IDENTITY,
})

export type PdfValue = InferValue<typeof PDF>
