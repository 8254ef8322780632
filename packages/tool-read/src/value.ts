/** The canonical read_file value's schema, one variant per reader (tagged by `kind`); the value types are inferred from it. */

import type { InferValue, ParameterSchemaSpec } from '@deepseek-ai/dsh-tools'

const object = <const P extends ParameterSchemaSpec>(properties: P) =>
  ({ type: 'object', additionalProperties: false, properties }) as const
const required = <const S extends object>(spec: S) => ({ ...spec, required: true as const })

const string = { type: 'string', required: true } as const
const integer = { type: 'integer', required: true } as const
const flag = { type: 'boolean', required: true } as const
const strings = { type: 'array', items: { type: 'string' } } as const
const kind = <const K extends string>(name: K) => ({ type: 'string', const: name, required: true }) as const

/** An image saved to the attachment store, as sent to the model (after any downscale). */
const ATTACHED = object({
  attachment_id: string,
  media_type: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'], required: true },
  bytes: integer,
  width: integer,
  height: integer,
  name: { type: 'string' },
})
/** null when not attached (the image variant says why in `reason`, a notebook output in its text). */
const ATTACHMENT = required({ oneOf: [ATTACHED, { type: 'null' }] } as const)

/** Set when the file grew while it was read: the read, counts included, covers its first `from` bytes (its size when opened). */
const GREW = { grew: object({ from: integer, to: integer }) } as const

/** In an agent session on the local fast path: the file's device, inode, size and mtime, to recognise an unchanged re-read. */
const IDENTITY = { identity: { type: 'string' } } as const

/** Set when this step's shared budget (maxBytesPerStep), not the call's own, ended the window. */
const STEP_CAPPED = { step_capped: { type: 'boolean' } } as const

const TEXT = object({
  kind: kind('text'),
  path: string,
  start_line: integer,
  lines: required(strings),
  /** The file's line count, or an estimate when `total_exact` is false. */
  total_lines: integer,
  total_exact: flag,
  /** Lines cut at maxLineLength among those shown. */
  cut_lines: integer,
  /** Whether the byte budget, not `limit`, ended the window. */
  byte_capped: flag,
  /** `utf-8`, `utf-16le`/`be`, `utf-32le`/`be`, or the legacy encoding decoded from (`GB18030`, `windows-1251`, …). */
  encoding: string,
  /** Present when the detected encoding is a guess: other encodings the file may be in (maybe none), to pass as `encoding`. */
  alternatives: strings,
  /** UTF-8 holding bytes that are not UTF-8 (shown as U+FFFD): the first line with one, or null when past the lines scanned. */
  first_invalid_line: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
  ...GREW,
  ...IDENTITY,
  ...STEP_CAPPED,
})

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

const NOTEBOOK = object({
  kind: kind('notebook'),
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

const IMAGE = object({
  kind: kind('image'),
  path: string,
  format: { type: 'string', enum: ['png', 'jpeg', 'gif', 'webp', 'bmp'], required: true },
  /** As displayed: after the EXIF orientation. */
  width: integer,
  height: integer,
  /** The file's size in bytes. */
  bytes: integer,
  /** An animation's frame count and the (1-based) frame attached. */
  animated: object({ frames: integer, shown: integer }),
  attached: ATTACHMENT,
  reason: { type: 'string', enum: ['no-image-input', 'no-attachment-store'] },
  ...GREW,
})

const PDF = object({
  kind: kind('pdf'),
  path: string,
  pages_total: integer,
  pages: { type: 'array', items: object({ number: integer, text: string }), required: true },
  /** The `pages` value that continues, when more remain. */
  next: { type: 'string' },
  ...GREW,
  ...IDENTITY,
})

/** The same window, bytes and file as an earlier call whose result the model still has: named instead of shown again. */
const UNCHANGED = object({
  kind: kind('unchanged'),
  path: string,
  /** The earlier call, by the host's call id. */
  call_id: string,
  unit: { type: 'string', enum: ['lines', 'pages'], required: true },
  /** What that call showed, e.g. `1-200` (lines) or `1-3,5` (pages). */
  shown: string,
  ...IDENTITY,
})

/** Nothing read: this step's reads had spent maxBytesPerStep. Where to start in a later step: `offset`, or `pages` (a PDF). */
const DEFERRED = object({
  kind: kind('deferred'),
  path: string,
  offset: { type: 'integer' },
  pages: { type: 'string' },
})

/** Tagged by `kind`, as bash_bg's values are: inside a read value `type` already names a notebook cell's or output's type. */
export const VALUE_SCHEMA = { oneOf: [TEXT, NOTEBOOK, IMAGE, PDF, UNCHANGED, DEFERRED] } as const

export type ReadValue = InferValue<typeof VALUE_SCHEMA>
export type TextValue = Extract<ReadValue, { kind: 'text' }>
export type NotebookValue = Extract<ReadValue, { kind: 'notebook' }>
export type ImageValue = Extract<ReadValue, { kind: 'image' }>
export type PdfValue = Extract<ReadValue, { kind: 'pdf' }>
export type UnchangedValue = Extract<ReadValue, { kind: 'unchanged' }>
export type NotebookCell = NotebookValue['cells'][number]
export type NotebookOutput = NotebookCell['outputs'][number]
export type Attached = NonNullable<ImageValue['attached']>
