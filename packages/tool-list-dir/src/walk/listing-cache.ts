// What a host's walks read of directories they only counted, kept for its next walks: taken again only while the
// directory is the same inode, unchanged since (its mtime and ctime), so a re-listing costs one lstat per directory.
import type { Dirent, Stats } from 'node:fs'

/**
 * A directory changed this recently is not kept: its timestamps come from a coarse clock (a tick of a few ms), so a
 * change in the same tick as the read could leave them as they were.
 */
export const SETTLED_MS = 2000

/**
 * Filesystems (statfs types) that move a directory's mtime with every entry added, removed or renamed, from this
 * machine's clock: ext2-4, XFS, Btrfs, tmpfs, overlayfs, ZFS, F2FS, bcachefs. Elsewhere a directory is read each time:
 * /proc and sysfs keep a directory's times while its entries come and go (a process's fdinfo, task), FUSE and network
 * filesystems stamp what their backend or another machine says.
 */
const TIMED = new Set([0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010, 0xCA451A4E])

/** Whether a directory on a filesystem of this statfs type may be kept (see TIMED). */
export const keepsTimes = (type: number): boolean => TIMED.has(type)

/** What identifies a directory's contents: an entry added, removed or renamed moves mtime; a replaced inode moves ino. */
type Identity = Pick<Stats, 'dev' | 'ino' | 'mtimeMs' | 'ctimeMs'>

/** A kept directory: what it was, its entries, what it weighs, and the walk that last used it. */
interface Kept extends Identity { dirents: Dirent[], weight: number, walk: number }

/** What a directory costs beside its entries, in entries (its key, record and array: measured about 4x an entry's 100 bytes). */
const DIRECTORY_WEIGHT = 4

/**
 * Characters of names an entry's 100 bytes cover, and of its path a directory's weight covers: past them the text
 * itself is what costs (about a byte a character), 100 characters an entry more, so that names of 250 characters or paths
 * ten levels of them deep do not hold 3-6x the heap the limit stands for (measured 315 and 646 bytes an entry).
 */
const NAME_CHARS = 20
const PATH_CHARS = 100
const CHARS_PER_ENTRY = 100

function weightOf(local: string, dirents: Dirent[]): number {
  let text = local.length - PATH_CHARS - NAME_CHARS * dirents.length
  for (let index = 0; index < dirents.length; index++) text += (dirents[index] as Dirent).name.length
  return dirents.length + DIRECTORY_WEIGHT + (text > 0 ? Math.ceil(text / CHARS_PER_ENTRY) : 0)
}

export class ListingCache {
  /** Least recently used first: a Map iterates in insertion order, and a use moves a directory to the end. */
  private readonly kept = new Map<string, Kept>()
  private weight = 0
  /** Walks started: the current one's number. */
  private walks = 0
  /** Directories taken back (for tests and the bench). */
  hits = 0

  /**
   * `limit`: entries held, all directories together, each directory weighing DIRECTORY_WEIGHT more and long text more
   * (weightOf). Room is made by dropping what earlier walks used least recently; what the current walk used is never
   * dropped for it, so a walk larger than the cache keeps its first part for the next one (dropping the least recently
   * used would leave it none).
   */
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
    this.kept.delete(local)
    this.kept.set(local, kept)
    kept.walk = this.walks
    this.hits++
    return kept.dirents
  }

  /**
   * Keep `local`'s entries, read after `seen` (its fstat), unless it changed within SETTLED_MS of `since` (the walk's start)
   * or no room can be made for it.
   */
  put(local: string, seen: Identity, dirents: Dirent[], since: number): void {
    if (Math.max(seen.mtimeMs, seen.ctimeMs) > since - SETTLED_MS) return
    const old = this.kept.get(local)
    if (old !== undefined) this.drop(local, old)
    const weight = weightOf(local, dirents)
    for (const [key, kept] of this.kept) {
      if (this.weight + weight <= this.limit) break
      if (kept.walk === this.walks) break // all that follow were used by this walk too
      this.drop(key, kept)
    }
    if (this.weight + weight > this.limit) return
    this.kept.set(local, { dev: seen.dev, ino: seen.ino, mtimeMs: seen.mtimeMs, ctimeMs: seen.ctimeMs, dirents, weight, walk: this.walks })
    this.weight += weight
  }

  has(local: string): boolean {
    return this.kept.has(local)
  }

  /** Entries held now, directories weighed in (for tests and the bench). */
  get size(): number {
    return this.weight
  }

  private drop(local: string, kept: Kept): void {
    this.kept.delete(local)
    this.weight -= kept.weight
  }
}

const same = (a: Identity, b: Identity): boolean => a.ino === b.ino && a.dev === b.dev && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
