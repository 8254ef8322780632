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

/**
 * A text read keeps its window in the result meta, so the read card survives replay. The lines
 * travel as one string: the host snapshots and freezes meta node by node, and 2000 line objects
 * cost more than the whole read.
 */
export function presentationMeta(value: ReadValue): JsonValue {
  if (value.kind !== 'text') return { kind: value.kind, path: value.path }
  return { kind: 'text', path: value.path, offset: value.startLine, text: value.lines.join('\n'), count: value.lines.length, totalLines: value.totalLines }
}

interface TextMeta {
  path: string
  offset: number
  text: string
  count: number
  totalLines: number
}

function textMeta(meta: unknown): TextMeta | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined
  const { kind, path, offset, text, count, totalLines } = meta as Record<string, unknown>
  if (kind !== 'text' || typeof path !== 'string' || typeof text !== 'string') return undefined
  if (!Number.isInteger(offset) || !Number.isInteger(count) || !Number.isInteger(totalLines)) return undefined
  return { path, offset: offset as number, text, count: count as number, totalLines: totalLines as number }
}

export function presentResult(_args: ReadArgsView, result: ToolResult): ToolResultView | undefined {
  if (result.isError) return undefined
  const meta = textMeta(result.meta)
  if (meta === undefined) return undefined
  const lines = meta.count === 0 ? [] : meta.text.split('\n').map((text, i) => ({ number: meta.offset + i, text }))
  return { card: 'read', path: meta.path, offset: meta.offset, lines, totalLines: meta.totalLines, content: result.content }
}
