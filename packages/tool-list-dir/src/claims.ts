// Subtrees a walk handed its count thread: each is counted by whichever thread claims it first (count-thread.ts).
import type { ListRequest } from './args.ts'
import type { GitIgnore, Repo } from './filters/gitignore.ts'
import { LocalSource } from './local-source.ts'
import { addTotals, noTotals, type SharedBudget, type Totals, walk } from './walk.ts'

/** A subtree: its open directory (a descriptor the walk's thread lent), its paths, and where it lies below the listed one. */
export interface Root { fd: number, display: string, local: string, rel: string }

/** How one thread counts its share of the roots. */
export interface Share {
  roots: readonly Root[]
  /** One cell both threads claim roots from (the next unclaimed index). */
  claims: Int32Array
  /** The walk's request with a window of none: everything is counted. */
  counting: ListRequest
  repo: Repo | undefined
  /** The rules in effect at the roots' parent, and the roots' level. */
  rules: GitIgnore | undefined
  level: number
  signal: AbortSignal
  budget: () => SharedBudget
  /** Whether to stop claiming (the walk is over). */
  stop: () => boolean
}

/**
 * Claim roots until none is left, counting each one claimed: a walk of it through its lent descriptor (never closed
 * here). `claimed`: how many this thread claimed.
 */
export async function countClaimed(share: Share): Promise<Totals & { claimed: number }> {
  const totals = { ...noTotals(), claimed: 0 }
  for (;;) {
    if (share.stop()) break
    const index = Atomics.add(share.claims, 0, 1)
    const root = share.roots[index]
    if (root === undefined) break
    totals.claimed++
    const source = new LocalSource()
    const dir = { display: root.display, local: root.local }
    source.adopt(dir, root.fd)
    const start = { prefix: root.rel, level: share.level, rules: share.rules }
    try {
      const result = await walk(source, dir, share.counting, share.repo, share.signal, { budget: share.budget(), start })
      const { total, ignored, gitignored, partial } = result
      addTotals(totals, { ...result.counts, total, ignored, gitignored, partial })
    } catch (error) {
      if (share.signal.aborted) throw error
      // A subtree that cannot be read is an entry that cannot be entered, as in the walk itself.
    }
  }
  return totals
}
