/** Pure: the UI card of a call and of its result, and the meta a result leaves on the session's log. */

import type { JsonValue } from '@deepseek-ai/dsh-session'
import type { GenericCallView, ToolResult, ToolResultView } from '@deepseek-ai/dsh-tools'
import { seenOf } from './session/unchanged.ts'
import type { ReadValue } from './value.ts'

type ReadArgsView = { file_path: string, offset?: number, limit?: number }

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
 * A text read's window, for the read card on replay; lines as one string (the host freezes meta node by node: 2000
 * objects cost more). `seen`: what a later identical call compares (session/unchanged.ts).
 */
export function presentationMeta(value: ReadValue, window: string): JsonValue {
  const seen = seenOf(window, value)
  const extra = seen === undefined ? {} : { seen: { ...seen } }
  if (value.kind !== 'text') return { kind: value.kind, path: value.path, ...extra }
  const { path, start_line: offset, lines, total_lines: totalLines } = value
  return { kind: 'text', path, offset, text: lines.join('\n'), count: lines.length, totalLines, ...extra }
}

export function presentResult(_args: ReadArgsView, result: ToolResult): ToolResultView | undefined {
  // Replayed meta is untrusted JSON: anything but a well-formed text window gets the generic card.
  const { kind, path, offset, text, count, totalLines } = (result.meta ?? {}) as Record<string, unknown>
  if (result.isError || kind !== 'text' || typeof path !== 'string' || typeof text !== 'string') return undefined
  if (!Number.isInteger(offset) || !Number.isInteger(count) || !Number.isInteger(totalLines)) return undefined
  const first = offset as number
  const lines = count === 0 ? [] : text.split('\n').map((line, i) => ({ number: first + i, text: line }))
  return { card: 'read', path, offset: first, lines, totalLines: totalLines as number, content: result.content }
}
