// What a host's walks read of directories they only counted, kept for its next walks: taken again only while the
// directory is the same inode, unchanged since (its mtime and ctime), so a re-listing costs one lstat per directory.
import type { Dirent, Stats } from 'node:fs'

/**
 * A directory changed this recently is not kept: its timestamps come from a coarse clock (a tick of a few ms; another
 * machine's clock on a network filesystem), so a change in the same tick as the read could leave them as they were.
 */
export const SETTLED_MS = 2000

/** What identifies a directory's contents: an entry added, removed or renamed moves mtime; a replaced inode moves ino. */
type Identity = Pick<Stats, 'dev' | 'ino' | 'mtimeMs' | 'ctimeMs'>

interface Kept extends Identity { dirents: Dirent[] }

export class ListingCache {
  private readonly kept = new Map<string, Kept>()
  private entries = 0
  private walks = 0
  /** Directories taken back (for tests and the bench). */
  hits = 0

  /** `limit`: entries held, all directories together (a directory counts one more); the least recently used go first. */
  constructor(private readonly limit: number) {}

  /**
   * Whether a walk starting now keeps what it reads: not the host's first. The first call of a session is the one a
   * user waits on most, and keeping costs a walk an fstat per directory and a GC's copy of every entry it holds.
   */
  keeping(): boolean {
    return this.walks++ > 0
  }

  /** `local`'s entries as last read, when `now()` (its lstat) shows the same directory, unchanged. */
  get(local: string, now: () => Identity | undefined): Dirent[] | undefined {
    const kept = this.kept.get(local)
    if (kept === undefined) return undefined
    const identity = now()
    if (identity === undefined || !same(kept, identity)) {
      this.drop(local, kept)
      return undefined
    }
    // Most recently used last: a Map iterates in insertion order, so eviction takes the first.
    this.kept.delete(local)
    this.kept.set(local, kept)
    this.hits++
    return kept.dirents
  }

  /**
   * Keep `local`'s entries, read after `seen` (its fstat), unless it changed within SETTLED_MS of `since` (the walk's start)
   * or is larger than the whole cache.
   */
  put(local: string, seen: Identity, dirents: Dirent[], since: number): void {
    if (Math.max(seen.mtimeMs, seen.ctimeMs) > since - SETTLED_MS) return
    const size = dirents.length + 1
    if (size > this.limit) return
    const old = this.kept.get(local)
    if (old !== undefined) this.drop(local, old)
    this.kept.set(local, { dev: seen.dev, ino: seen.ino, mtimeMs: seen.mtimeMs, ctimeMs: seen.ctimeMs, dirents })
    this.entries += size
    for (const [key, kept] of this.kept) {
      if (this.entries <= this.limit) break
      this.drop(key, kept)
    }
  }

  has(local: string): boolean {
    return this.kept.has(local)
  }

  /** Entries held now (for tests and the bench). */
  get size(): number {
    return this.entries
  }

  private drop(local: string, kept: Kept): void {
    this.kept.delete(local)
    this.entries -= kept.dirents.length + 1
  }
}

const same = (a: Identity, b: Identity): boolean => a.ino === b.ino && a.dev === b.dev && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
