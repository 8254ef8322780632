/** What the host's thread and a matching thread (match-worker.ts) say to each other. */

/** The worker's `workerData`: the pattern in RE2 syntax; `every`: report each matching line (false: the first, then stop). */
export interface MatchSetup {
  source: string
  every: boolean
}

/** A batch of whole lines to test, in order. */
export interface MatchBatch {
  lines: string[]
}

/** One answer per batch, in order: the indexes in it of the lines that matched. */
export interface MatchAnswer {
  matched: number[]
}
