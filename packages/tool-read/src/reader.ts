/** What every reader (text, image, notebook, pdf) takes and gives: one signature, one row each in tool.ts. */

import type { Config } from './config.ts'
import type { ImageRead } from './image.ts'
import type { CellWindow } from './notebook.ts'
import type { PdfRead } from './pdf.ts'
import type { Source } from './source.ts'
import type { TextRead } from './text.ts'

interface ReadOptions {
  /** 1-based first line (cell for notebooks). */
  offset: number
  limit: number
  encoding?: string | undefined
  pages?: string | undefined
}

export interface ReadRequest {
  source: Source
  config: Config
  options: ReadOptions
}

/** The canonical value of one call: one kind per reader, each with the path read. */
export type TextValue = { kind: 'text', path: string } & TextRead
export type NotebookValue = { kind: 'notebook', path: string, language: string, startCell: number, totalCells: number } & CellWindow
export type ImageValue = { kind: 'image', path: string } & ImageRead
export type PdfValue = { kind: 'pdf', path: string } & PdfRead
/** Set when the file grew while it was read: the read, counts included, covers its first `from` bytes (its size when opened). */
type Growth = { grew?: { from: number, to: number } }
export type ReadValue = (TextValue | NotebookValue | ImageValue | PdfValue) & Growth

export interface ReadResult {
  value: ReadValue
  /** Whether to emit fs/observed, so dsh-tool-fs's edit/write accept a follow-up edit. */
  observe: boolean
}

export type Reader = (request: ReadRequest) => Promise<ReadResult>
