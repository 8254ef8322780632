/** Pure UI presentation: the call card, and the result card rebuilt from persisted meta. */

import type { JsonValue } from '@deepseek-ai/dsh-session'
import type { GenericCallView, ToolResult, ToolResultView } from '@deepseek-ai/dsh-tools'
import type { ReadValue } from './value.ts'

interface ReadArgsView {
  file_path: string
  offset?: number
  limit?: number
}

export function presentCall(args: ReadArgsView): GenericCallView {
  const { offset, limit } = args
  const window = limit !== undefined
    ? ` (${offset ?? 1} - ${(offset ?? 1) + limit - 1})`
    : offset !== undefined ? ` (from ${offset})` : ''
  return {
    card: 'generic',
    title: `Read ${args.file_path}${window}`,
    kind: 'read',
    locations: [{ path: args.file_path, line: offset ?? 1 }],
  }
}

/** A text read keeps its numbered window in the result meta, so the card survives replay. */
export function presentationMeta(value: ReadValue): JsonValue {
  if (value.kind !== 'text') return { kind: value.kind, path: value.path }
  return {
    kind: 'text',
    path: value.path,
    offset: value.startLine,
    lines: value.lines.map((text, i) => ({ number: value.startLine + i, text })),
    totalLines: value.totalLines,
  }
}

interface TextMeta {
  path: string
  offset: number
  lines: { number: number, text: string }[]
  totalLines: number
}

function textMeta(meta: unknown): TextMeta | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const { kind, path, offset, lines, totalLines } = meta as Record<string, unknown>
  if (kind !== 'text' || typeof path !== 'string' || !Number.isInteger(offset) || !Number.isInteger(totalLines)) return undefined
  if (!Array.isArray(lines)) return undefined
  for (const line of lines) {
    if (typeof line !== 'object' || line === null) return undefined
    const { number, text } = line as Record<string, unknown>
    if (!Number.isInteger(number) || typeof text !== 'string') return undefined
  }
  return { path, offset: offset as number, lines: lines as TextMeta['lines'], totalLines: totalLines as number }
}

export function presentResult(_args: ReadArgsView, result: ToolResult): ToolResultView | undefined {
  if (result.isError) return undefined
  const meta = textMeta(result.meta)
  if (meta === undefined) return undefined
  return { card: 'read', path: meta.path, offset: meta.offset, lines: meta.lines, totalLines: meta.totalLines, content: result.content }
}
