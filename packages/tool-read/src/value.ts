/** The canonical value of one read_file call: one kind per reader, each with the path read. */

import type { ImageRead } from './image.ts'
import type { CellWindow } from './notebook.ts'
import type { PdfRead } from './pdf.ts'
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

export type PdfValue = { kind: 'pdf', path: string } & PdfRead

export type ReadValue = TextValue | NotebookValue | ImageValue | PdfValue
