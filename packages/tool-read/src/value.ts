/** The canonical value of one read_file call: one of three kinds, each the reader's result plus its path. */

import type { ImageRead } from './image.ts'
import type { CellWindow } from './notebook.ts'
import type { TextRead } from './text.ts'

export type TextValue = { kind: 'text', path: string } & TextRead

export type NotebookValue = {
  kind: 'notebook'
  path: string
  language: string
  startCell: number
  totalCells: number
} & CellWindow

export type ImageValue = { kind: 'image', path: string } & ImageRead

export type ReadValue = TextValue | NotebookValue | ImageValue
