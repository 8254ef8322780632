/**
 * Unchanged re-reads: a window the model already has, from the same file with the same bytes, named instead of shown.
 * Every doubt gets the full text: the rules are in the README ("Unchanged re-reads").
 */

import { createHash } from 'node:crypto'
import type { JsonValue } from '@deepseek-ai/dsh-session'
import { pageRanges } from '../formats/pdf/render.ts'
import type { ReadValue } from '../value.ts'
import type { UnchangedValue } from './value.ts'
import type { EarlierResult, SessionView } from './surface.ts'

/** What a result records (in its meta, on the session's log) so a later identical call can recognise it. */
export interface Seen {
  /** offset, limit, pages and encoding as the call resolved them. */
  window: string
  path: string
  /** Device, inode, size and mtime of the file read. */
  identity: string
  /** SHA-256 of the value: what the model was shown, counts and notes included. */
  digest: string
  /** This answer was itself `unchanged`: the next identical call gets the full text. */
  unchanged?: true
}

export interface WindowArgs {
  offset?: number | null | undefined
  limit?: number | null | undefined
  pages?: string | null | undefined
  encoding?: string | null | undefined
}

/** The window a call asked for, with the defaults it resolves to. */
export function windowKey(args: WindowArgs, maxEntries: number): string {
  // Blanks count as absent, as blanksAsAbsent has them (presentationMeta sees the arguments as sent).
  const { offset, limit, pages, encoding } = args
  return JSON.stringify([offset ?? 1, Math.min(limit ?? maxEntries, maxEntries), pages || null, encoding || null])
}

/** The file's identity on a text or PDF value, for a later call to compare (in a session whose surface can be read). */
export function withIdentity(value: ReadValue, identity: string | undefined): ReadValue {
  return identity !== undefined && (value.kind === 'text' || value.kind === 'pdf') ? { ...value, identity } : value
}

function digestOf(value: ReadValue): string {
  return createHash('sha256').update(JSON.stringify({ ...value, identity: undefined })).digest('hex')
}

/**
 * The record of a value a later call may name: a whole text or PDF read (nothing cut by the step's budget, no growth
 * during the read) of a file with an identity, or an `unchanged` answer (so that no second one follows).
 */
export function seenOf(window: string, value: ReadValue): Seen | undefined {
  if (value.kind === 'unchanged') return { window, path: value.path, identity: value.identity ?? '', digest: '', unchanged: true }
  if (value.kind !== 'text' && value.kind !== 'pdf') return undefined
  if (value.identity === undefined || value.grew !== undefined) return undefined
  if (value.kind === 'text' && (value.step_capped === true || value.lines.length === 0)) return undefined
  return { window, path: value.path, identity: value.identity, digest: digestOf(value) }
}

function parseSeen(meta: JsonValue | undefined): Seen | undefined {
  const seen = (meta as { seen?: unknown } | null | undefined)?.seen
  if (typeof seen !== 'object' || seen === null) return undefined
  const { window, path, identity, digest, unchanged } = seen as Record<string, unknown>
  if (typeof window !== 'string' || typeof path !== 'string' || typeof identity !== 'string' || typeof digest !== 'string') return undefined
  return { window, path, identity, digest, ...unchanged === true ? { unchanged: true } : {} }
}

/** The earlier result this read repeats exactly and the model still sees, or undefined (full text). */
function repeated(view: SessionView, now: Seen): EarlierResult | undefined {
  // The latest earlier read of this window of this path decides; an older one never stands in for it.
  const latest = view.earlier?.find((result) => {
    const seen = parseSeen(result.meta)
    return seen !== undefined && seen.window === now.window && seen.path === now.path
  })
  const seen = parseSeen(latest?.meta)
  if (latest === undefined || seen === undefined) return undefined
  if (!latest.visible || latest.isError || seen.unchanged === true) return undefined
  if (latest.turn === view.step.turn && latest.step === view.step.step) return undefined
  return seen.identity === now.identity && seen.digest === now.digest ? latest : undefined
}

/** `value` as an `unchanged` answer when an earlier result the model still sees holds exactly it, else undefined. */
export function unchangedAnswer(view: SessionView, window: string, value: ReadValue): UnchangedValue | undefined {
  const now = seenOf(window, value)
  if (now === undefined || now.unchanged === true || (value.kind !== 'text' && value.kind !== 'pdf')) return undefined
  const earlier = repeated(view, now)
  if (earlier === undefined) return undefined
  const shown = value.kind === 'text'
    ? { unit: 'lines' as const, shown: `${value.start_line}-${value.start_line + value.lines.length - 1}` }
    : { unit: 'pages' as const, shown: pageRanges(value.pages.map((page) => page.number)) }
  return { kind: 'unchanged', path: value.path, call_id: earlier.callId, ...shown, identity: now.identity }
}

