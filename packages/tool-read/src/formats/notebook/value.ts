/** The notebook room's variant of the read_file value: a window of cells, their outputs, attached plots. */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object, tag } from '@gencode-ai/dsh-tool-common'
import { flag, GREW, integer, STEP_CAPPED, string } from '../fields.ts'
import { ATTACHMENT } from '../image/value.ts'

const OUTPUT = object({
  type: string,
  text: string,
  /** A PNG/JPEG output: attached (to the store's limits) when the route takes images and the call's image budget lasts. */
  image: object({ media_type: { type: 'string', enum: ['image/png', 'image/jpeg'], required: true }, attached: ATTACHMENT }),
})

const CELL = object({
  /** 1-based cell number. */
  index: integer,
  /** code, markdown, raw, or a type Jupyter does not define, shown as it is. */
  type: string,
  /** The execution count of a code cell; null when it never ran; absent for other cells. */
  execution_count: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
  source: string,
  outputs: { type: 'array', items: OUTPUT, required: true },
})

export const NOTEBOOK = object({
  kind: tag('notebook'),
  path: string,
  language: string,
  start_cell: integer,
  total_cells: integer,
  cells: { type: 'array', items: CELL, required: true },
  /** Whether the byte budget, not `limit`, ended the window. */
  byte_capped: flag,
  ...GREW,
  ...STEP_CAPPED,
})

export type NotebookValue = InferValue<typeof NOTEBOOK>
export type NotebookCell = NotebookValue['cells'][number]
export type NotebookOutput = NotebookCell['outputs'][number]
