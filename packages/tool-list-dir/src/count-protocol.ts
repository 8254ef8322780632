// What a walk sends its count thread and what it answers (count-thread.ts, count-worker.ts).
import type { Root } from './claims.ts'
import type { RulesText } from './filters/gitignore.ts'
import type { Totals } from './walk.ts'

/**
 * The thread's cells, shared: 1 once it is loaded; how many requests it has not answered yet; how many walks that may
 * hand it subtrees are running (while any is, the thread polls for requests instead of sleeping: see count-worker.ts).
 */
export const LOADED = 0
export const IN_FLIGHT = 1
export const WALKS = 2

/** A walk's cells, shared: the entries each thread counted (SharedBudget), and 1 once the walk is aborted. */
export const ABORTED = 2

/** Subtrees to count: each an open directory (a descriptor the walk lent), where it lies, and the walk's terms. */
export interface CountRequest {
  roots: Root[]
  /** The next root to claim, shared: the walk counts itself those the thread has not claimed when its own part is done. */
  claims: Int32Array
  /** The level of every root (1: the listed directory's children). */
  level: number
  /** The listing's arguments that decide what is counted. */
  args: { depth: number, ignore: string[], all: boolean }
  /** The repository's rules in effect at the roots' parent, and where git's index is read from. */
  repo?: { prefix: string, root: string | undefined, tracked: 'index' | 'git' | 'unknown', rules: RulesText }
  /** The walk's cells: [0] the entries the walk counted, [1] those this thread counted for it, [ABORTED]. */
  cells: Int32Array
  /** The answer, also written here, so a walk waiting for it need not sleep until the message comes. */
  answer: Int32Array
}

/** Cells of an answer: its state (0 pending, 1 counted, 2 failed), then the totals. */
export const ANSWER_CELLS = 9
/** The totals' fields in the answer's cells, after its state; then `partial`. */
export const FIELDS = ['total', 'file', 'directory', 'symlink', 'other', 'ignored', 'gitignored'] as const

/** The answer once written: totals, or undefined for a failure; `pending` before. */
export function readTotals(answer: Int32Array): Totals | undefined | 'pending' {
  const state = Atomics.load(answer, 0)
  if (state === 0) return 'pending'
  if (state === 2) return undefined
  const totals = Object.fromEntries(FIELDS.map((field, index) => [field, answer[index + 1] as number]))
  return { ...totals, partial: answer[FIELDS.length + 1] === 1 } as Totals
}

/** A walk has started: poll for its requests. */
export interface Wake { wake: true }

export type CountReply = { totals: Totals } | { error: string }
