// Directory reads on the local disk: one handle per directory (opened without following links, read through
// /proc/<pid>/fd), entries with their details.
import {
  closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, statfsSync, statSync,
  type Dirent, type Stats,
} from 'node:fs'
import { readdir } from 'node:fs/promises'
import { dirname } from 'node:path'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { fsPath, nameFromBytes } from '@gencode-ai/dsh-tool-common'
import { checkAborted } from '../errors.ts'
import type { Child } from '../types.ts'
import { keepsTimes, type ListingCache } from './listing-cache.ts'
import { type Bare, type Dir, type DirSource, type LinkMode, MAX_SMALL_FILE } from './source.ts'
import { andThen, type Maybe } from './steps.ts'

/** A directory's read: where its entries are reached, the entries, and whether it was read at once (small). */
type Read = [base: string | Buffer, dirents: Dirent[], small: boolean]
/**
 * A directory on the local disk: its process path, and for one reached by descending, the directory it was listed in
 * and its name there (it is opened from its parent's handle, and checked to still be a directory, not a link).
 */
export interface LocalDir extends Dir {
  readonly local: string
  readonly parent?: LocalDir
  readonly name?: string
}

/** A bare read, with what `exact` needs to re-read it. */
interface LocalBare extends Bare<Dirent> { read: Read }

/** Sync stats in slices, yielding between them: a promise per stat cost about 7x `ls -l` on 100k entries, slices 1x. */
const SLICE = 256

/**
 * Linux names an open descriptor's directory `/proc/self/fd/N`: paths under it resolve from that directory (an openat
 * without openat), so every read of a listing goes through a handle whose identity was checked, never through a path
 * a swapped component could redirect. Elsewhere each directory is read by its path.
 */
const HANDLES = existsSync('/proc/self/fd')

/**
 * The same directory by this process's id where /proc is this process's pid namespace's: a lookup of `self` (a link)
 * fewer for each of a walk's two opens per directory (ours, then readdir's own), about 1 µs each.
 */
const FD_DIR = HANDLES && readlinkOr('/proc/self') === String(process.pid) ? `/proc/${process.pid}/fd` : '/proc/self/fd'

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/**
 * The listed directory, when its own size (ext4: its blocks; tmpfs: about 20 bytes an entry) is at most this, is read
 * synchronously: a few hundred µs, where a thread-pool round trip per directory (two wake-ups on a loaded machine) cost a
 * walk 2x `find`. Directories a walk descends into are read synchronously unsized: an fstat each (a Stats object with four
 * Dates on Node 20) was 10-15 % of a walk of many small directories, and a large one read through the pool still builds its
 * names and entries on this thread in one go.
 */
const SYNC_DIR_BYTES = 32 * 1024
/** Entries read synchronously between two yields to the event loop, so signals, timers and aborts are served during a walk. */
const SYNC_RUN = 8192

/** The error a swapped directory gives: its entry's error text, or the listed path's refusal. */
export class ChangedError extends Error {
  readonly code = 'ECHANGED'
  constructor() {
    super('changed while it was being read')
  }
}

/** The fast path: one readdir with file types per directory, a stat only for entries shown or sorted by size / time. */
export class LocalSource implements DirSource<LocalDir> {
  readonly kind = 'local'
  readonly metadata = true
  readonly pinned = HANDLES
  /** Most directories are read synchronously at open: reading 16 ahead only held their descriptors and arrays (a walk +0.15x `find`). */
  readonly readAhead = 1
  /** Descriptors held by the directories being read: closed by release, all of them by close. */
  private readonly handles = new Map<LocalDir, number>()

  /** Entries read synchronously since the walk last yielded. */
  private run = 0

  /**
   * `cache`: the host's listings of directories walks only counted (see bare); `since`: when this walk started, so that
   * what changed just before is not kept.
   */
  constructor(private readonly cache?: ListingCache, private readonly since = Date.now()) {
    this.keep = cache?.keeping() === true ? cache : undefined
  }

  /** The cache this walk adds to (see ListingCache.keeping). */
  private readonly keep: ListingCache | undefined
  /** Per device, whether its filesystem's times show a change (keepsTimes): one statfs each per walk. */
  private readonly timed = new Map<number, boolean>()

  children(dir: LocalDir, links: LinkMode, signal: AbortSignal): Maybe<Child[]> {
    return andThen(this.read(dir, signal), (read) => this.shape(read, links, signal))
  }

  /** Node's own Dirents, where links are kept as entries (no stat each); names as decoded, `exact` re-reads them as bytes. */
  bare(dir: LocalDir, links: LinkMode, signal: AbortSignal): Maybe<Bare<Dirent> | Child[]> {
    const kept = this.kept(dir)
    return andThen(kept ?? this.read(dir, signal, this.keep), (read): Maybe<LocalBare | Child[]> => {
      if (links === 'follow') return this.shape(read, links, signal)
      checkAborted(signal)
      return { items: read[1], name: nameOf, type: typeOf, read }
    })
  }

  exact(bare: Bare, links: LinkMode, signal: AbortSignal): Maybe<Child[]> {
    return this.shape((bare as LocalBare).read, links, signal)
  }

  /**
   * Open `dir` and read its entries with their types: at once when it is small (yielding to the event loop first after
   * SYNC_RUN entries read so), through the thread pool when large.
   */
  private read(dir: LocalDir, signal: AbortSignal, cache?: ListingCache): Maybe<Read> {
    const [base, small] = this.enter(dir)
    if (!small) return readdir(base, { withFileTypes: true }).then((dirents): Read => [base, dirents, false])
    if (this.run <= SYNC_RUN) return this.readNow(dir, base, cache)
    this.run = 0
    return yieldToLoop().then(() => {
      checkAborted(signal)
      return this.readNow(dir, base, cache)
    })
  }

  /** Read `dir` now; with `cache`, keep what was read for later walks when nothing in it needs its handle again. */
  private readNow(dir: LocalDir, base: string | Buffer, cache?: ListingCache): Read {
    const seen = cache === undefined ? undefined : this.identity(dir)
    const dirents = readdirSync(base, { withFileTypes: true })
    this.run += dirents.length
    if (seen !== undefined && plain(dirents) && this.keepsTimes(seen.dev, base)) cache?.put(dir.local, seen, dirents, this.since)
    return [base, dirents, true]
  }

  /** Whether the filesystem of device `dev` (the directory reached by `base`) moves a directory's times (keepsTimes). */
  private keepsTimes(dev: number, base: string | Buffer): boolean {
    let timed = this.timed.get(dev)
    if (timed === undefined) {
      try {
        timed = keepsTimes(statfsSync(base).type)
      } catch {
        timed = false
      }
      this.timed.set(dev, timed)
    }
    return timed
  }

  /**
   * A counted directory's entries as an earlier walk read them, when an lstat of its path shows the same inode unchanged
   * since: nothing opened. Its path reaches only what its parent's listing named (a link is never entered), and an inode
   * unchanged has the entries that were read through its checked handle.
   */
  private kept(dir: LocalDir): Read | undefined {
    if (this.cache === undefined || dir.parent === undefined) return undefined
    const dirents = this.cache.get(dir.local, () => statOf(fsPath(dir.local), false))
    if (dirents === undefined) return undefined
    this.run += dirents.length
    return [fsPath(dir.local), dirents, true]
  }

  /** The open directory's inode and times, taken before its read (a change during the read then shows next time). */
  private identity(dir: LocalDir): Stats | undefined {
    const fd = this.handles.get(dir)
    try {
      return fd === undefined ? lstatSync(fsPath(dir.local)) : fstatSync(fd)
    } catch {
      return undefined
    }
  }

  private shape([base, dirents, small]: Read, links: LinkMode, signal: AbortSignal): Maybe<Child[]> {
    // One pass (a walk visits every entry): the children, whether a name read back with U+FFFD, whether any is a link.
    const children: Child[] = []
    let replaced = false
    let linked = false
    for (let index = 0; index < dirents.length; index++) {
      const dirent = dirents[index] as Dirent
      const name = dirent.name
      if (name.includes('\ufffd')) replaced = true
      const type = typeOf(dirent)
      if (type === 'symlink') linked = true
      children.push({ name, type })
    }
    // A name that is not valid UTF-8 reads back with U+FFFD: re-read as bytes, so it is listed (and reached) as it is.
    if (!replaced) return this.followed(base, children, links, linked, signal)
    const options = { withFileTypes: true, encoding: 'buffer' } as const
    const named = (raw: Dirent<Buffer>[]): Maybe<Child[]> => {
      checkAborted(signal)
      const renamed = raw.map((dirent): Child => ({ name: nameFromBytes(dirent.name), type: typeOf(dirent) }))
      return this.followed(base, renamed, links, linked, signal)
    }
    return small ? named(readdirSync(base, options)) : readdir(base, options).then(named)
  }

  /** `follow` (the README's plain mode) reports what a link points at; only links pay for a stat. */
  private followed(base: string | Buffer, children: Child[], links: LinkMode, linked: boolean, signal: AbortSignal): Maybe<Child[]> {
    checkAborted(signal)
    if (links !== 'follow' || !linked) return children
    // A link that dangles, loops (ELOOP) or passes through a file or an unreadable directory is other.
    return andThen(inSlices(children.filter((child) => child.type === 'symlink'), signal, (child) => {
      const info = statOf(under(base, child.name), true)
      child.type = info === undefined ? 'other' : typeOf(info)
    }), () => children)
  }

  /**
   * Open `dir`: the listed one by its checked realpath, one reached by descending by name from its open parent, never
   * through a link.
   */
  private enter(dir: LocalDir): [base: string | Buffer, small: boolean] {
    if (!HANDLES) {
      // By path: a directory reached by descending must still be one, not a link swapped in since its parent was read.
      if (dir.parent !== undefined && !lstatSync(fsPath(dir.local)).isDirectory()) throw new ChangedError()
      return [fsPath(dir.local), false]
    }
    const fd = this.handles.get(dir) ?? this.openHandle(dir)
    return [`${FD_DIR}/${fd}`, dir.parent !== undefined || fstatSync(fd).size <= SYNC_DIR_BYTES]
  }

  /** `dir`'s handle, opened now and checked (see enter). */
  private openHandle(dir: LocalDir): number {
    // A parent taken back from the cache was not opened: it is opened now, from its own parent's handle, so that every
    // directory read below the listed one is still reached through the handles of its ancestors, never by a path.
    const parent = dir.parent === undefined ? undefined : this.handles.get(dir.parent) ?? this.openHandle(dir.parent)
    let fd: number
    try {
      fd = openSync(parent === undefined ? fsPath(dir.local) : under(`${FD_DIR}/${parent}`, dir.name ?? ''), DIR_FLAGS)
    } catch (error) {
      // A link where a directory was read (ELOOP under O_NOFOLLOW), or a file now (ENOTDIR): swapped since.
      const code = (error as { code?: string }).code
      throw code === 'ELOOP' || code === 'ENOTDIR' ? new ChangedError() : error
    }
    this.handles.set(dir, fd)
    // The listed directory is the one whose realpath was checked: a component swapped before the open would show here.
    if (parent === undefined && !readlinkSync(`${FD_DIR}/${fd}`, { encoding: 'buffer' }).equals(Buffer.from(fsPath(dir.local)))) {
      this.release(dir)
      throw new ChangedError()
    }
    return fd
  }

  /** Where `dir`'s children are reached: its handle while open, else its path. */
  private base(dir: LocalDir): string | Buffer {
    const fd = this.handles.get(dir)
    return fd === undefined ? fsPath(dir.local) : `${FD_DIR}/${fd}`
  }

  release(dir: LocalDir): void {
    const fd = this.handles.get(dir)
    if (fd === undefined) return
    this.handles.delete(dir)
    closeSync(fd)
  }

  close(): void {
    for (const dir of this.handles.keys()) this.release(dir) // deleting the current key keeps a Map's iteration valid
  }

  /** A collapsed directory's entries, counted: one a walk reached, so read at once as those it descends into. */
  count(dir: LocalDir, signal: AbortSignal): number {
    const [base] = this.enter(dir)
    try {
      const names = readdirSync(base)
      checkAborted(signal)
      return names.length
    } finally {
      this.release(dir)
    }
  }

  // At once, as a walk reads a .gitignore per directory that has one: four thread-pool round trips each cost more than
  // the read (at most MAX_SMALL_FILE, a few ms at worst).
  readSmall(dir: LocalDir, name: string): string | undefined {
    // Never through a symlink (as git), never blocking on a FIFO; the size is checked on what was opened, before reading.
    const flag = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
    let fd
    try {
      fd = openSync(under(this.base(dir), name), flag)
    } catch {
      return undefined
    }
    try {
      const info = fstatSync(fd)
      if (!info.isFile() || info.size > MAX_SMALL_FILE) return undefined
      // At most the size seen (plus one byte, to see it grew past the limit), however the file changes meanwhile.
      const bytes = Buffer.alloc(Math.min(info.size, MAX_SMALL_FILE) + 1)
      let filled = 0
      while (filled < bytes.length) {
        const read = readSync(fd, bytes, filled, bytes.length - filled, filled)
        if (read === 0) break
        filled += read
      }
      return filled > MAX_SMALL_FILE ? undefined : bytes.toString('utf8', 0, filled)
    } catch {
      return undefined
    } finally {
      closeSync(fd)
    }
  }

  exists(dir: LocalDir, name: string): boolean {
    return statOf(under(this.base(dir), name), false) !== undefined
  }

  parent(dir: LocalDir): LocalDir | undefined {
    const up = dirname(dir.local)
    return up === dir.local ? undefined : { display: up, local: up }
  }

  child(dir: LocalDir, name: string): LocalDir {
    return { display: joinName(dir.display, name), local: joinName(dir.local, name), parent: dir, name }
  }

  details(dir: LocalDir, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Maybe<void> {
    const base = this.base(dir)
    return inSlices(children, signal, (child) => {
      if (!meta && child.type !== 'file') return
      if (meta ? child.mtimeMs !== undefined : child.size !== undefined) return // already fetched to sort
      const path = under(base, child.name)
      const info = statOf(path, links === 'follow' && child.type !== 'symlink')
      if (info === undefined) return // vanished between readdir and stat: shown without details
      if (child.type === 'file') child.size = info.size
      if (!meta) return
      child.mtimeMs = info.mtimeMs
      child.mode = info.mode
      if (child.type !== 'symlink') return
      try {
        const target = readlinkSync(path, { encoding: 'buffer' })
        child.target = nameFromBytes(target)
      } catch {
        // replaced between readdir and readlink: shown without a target
      }
    })
  }
}

/** path.join for a name read from a directory (never empty, `.`, `..` or holding `/`) on a normalized base: one concatenation. */
const joinName = (base: string, name: string): string => base === '.' ? name : base.endsWith('/') ? `${base}${name}` : `${base}/${name}`

/** `name` in the directory reached by `base`: a string path when both are valid UTF-8, else bytes. */
function under(base: string | Buffer, name: string): string | Buffer {
  const bytes = fsPath(name)
  if (typeof base === 'string' && typeof bytes === 'string') return `${base}/${bytes}`
  return Buffer.concat([Buffer.from(base), Buffer.from('/'), Buffer.from(bytes)])
}

function readlinkOr(path: string): string | undefined {
  try {
    return readlinkSync(path)
  } catch {
    return undefined
  }
}

/** A stat (`follow`) or lstat; undefined for whatever fails it (gone, a loop, permission denied). */
function statOf(path: string | Buffer, follow: boolean): Stats | undefined {
  try {
    return (follow ? statSync : lstatSync)(path, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

/** `each` over `items`: at once for a slice's worth, else slice by slice with a yield to the event loop between them. */
function inSlices<T>(items: T[], signal: AbortSignal, each: (item: T) => void): Maybe<void> {
  checkAborted(signal)
  if (items.length <= SLICE) {
    for (let index = 0; index < items.length; index++) each(items[index] as T)
    return
  }
  return sliced(items, signal, each)
}

async function sliced<T>(items: T[], signal: AbortSignal, each: (item: T) => void): Promise<void> {
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await yieldToLoop()
    checkAborted(signal)
    for (const item of items.slice(start, start + SLICE)) each(item)
  }
}

const nameOf = (dirent: Dirent): string => dirent.name

/**
 * Whether a directory's read can be kept: its entries need nothing but their names and types later (a link is
 * stat'ed through the handle, a name holding U+FFFD re-read as bytes, a .gitignore read through it).
 */
function plain(dirents: Dirent[]): boolean {
  for (let index = 0; index < dirents.length; index++) {
    const dirent = dirents[index] as Dirent
    const name = dirent.name
    if (dirent.isSymbolicLink() || name === '.gitignore' || name.includes('\ufffd')) return false
  }
  return true
}

const typeOf = (info: Pick<Stats, 'isFile' | 'isDirectory' | 'isSymbolicLink'>): Child['type'] =>
  info.isFile() ? 'file' : info.isDirectory() ? 'directory' : info.isSymbolicLink() ? 'symlink' : 'other'
