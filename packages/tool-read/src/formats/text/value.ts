/** The text room's variant of the read_file value: a numbered window of lines. */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object, required, tag } from '@gencode-ai/dsh-tool-common'
import { flag, GREW, IDENTITY, integer, STEP_CAPPED, string } from '../fields.ts'

export const TEXT = object({
  kind: tag('text'),
  path: string,
  start_line: integer,
  lines: required({ type: 'array', items: { type: 'string' } }),
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
  alternatives: { type: 'array', items: { type: 'string' } },
  /** UTF-8 holding bytes that are not UTF-8 (shown as U+FFFD): the first line with one, or null when past the lines scanned. */
  first_invalid_line: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
  ...GREW,
  ...IDENTITY,
  ...STEP_CAPPED,
})

export type TextValue = InferValue<typeof TEXT>
