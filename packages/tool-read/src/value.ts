/** The canonical value of one read_file call: one of three kinds. */

import type { AttachedImage, ImageFormat, NotAttachedReason } from './image.ts'
import type { NotebookCell } from './notebook.ts'
import type { TextEncoding } from './text.ts'

export type TextValue = {
  kind: 'text'
  path: string
  startLine: number
  lines: string[]
  totalLines: number
  /** False when the file was too large to count: totalLines is then an estimate. */
  totalExact: boolean
  cutLines: number
  byteCapped: boolean
  encoding: TextEncoding
}

export type NotebookValue = {
  kind: 'notebook'
  path: string
  language: string
  startCell: number
  totalCells: number
  cells: NotebookCell[]
  byteCapped: boolean
}

export type ImageValue = {
  kind: 'image'
  path: string
  format: ImageFormat
  width: number
  height: number
  bytes: number
  attached: AttachedImage | null
  reason?: NotAttachedReason
}

export type ReadValue = TextValue | NotebookValue | ImageValue
