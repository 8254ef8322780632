// What a walk sends its count thread and what it answers (count-thread.ts, count-worker.ts).
import type { RulesText } from './gitignore.ts'
import type { Totals } from './walk.ts'

/** The thread's cells, shared: 1 once it is loaded, and how many requests it has not answered yet. */
export const LOADED = 0
export const IN_FLIGHT = 1

/** A walk's cells, shared: the entries each thread counted (SharedBudget), and 1 once the walk is aborted. */
export const ABORTED = 2

/** Subtrees to count: each an open directory (its descriptor now the thread's), where it lies and the walk's terms. */
export interface CountRequest {
  roots: { fd: number, display: string, local: string, rel: string }[]
  /** The level of every root (1: the listed directory's children). */
  level: number
  /** The listing's arguments that decide what is counted. */
  args: { depth: number, ignore: string[], all: boolean }
  /** The repository's rules in effect at the roots' parent, and where git's index is read from. */
  repo?: { prefix: string, root: string | undefined, tracked: 'index' | 'git' | 'unknown', rules: RulesText }
  /** The walk's cells: [0] the entries the walk counted, [1] those this thread counted for it, [ABORTED]. */
  cells: Int32Array
}

export type CountReply = { totals: Totals } | { error: string }
