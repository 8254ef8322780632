import type { FsTarget } from '@deepseek-ai/dsh-fs'

export type EntryType = 'file' | 'directory' | 'symlink' | 'other'

/** One child of a directory as a source reports it, before filtering and shaping. */
export interface Child {
  name: string
  type: EntryType
  size?: number
  mtimeMs?: number
  /** st_mode permission bits. */
  mode?: number
  /** A symlink's link text. */
  target?: string
  /** Why a directory could not be read (recursive mode). */
  error?: string
  /** Recursive mode: shown as one line, not descended (gitignored, or in the heavy set). */
  collapsed?: Collapsed
  /** A collapsed directory's direct children. */
  children?: number
}

/** Why a directory is one line: the repository's .gitignore, or the heavy set (`node_modules`, `.git`, …). */
type Collapsed = 'gitignored' | 'heavy'

/** A directory to read: its display path, plus how the source reaches it. */
export interface Dir {
  display: string
  /** The process-local path (local fast path). */
  local?: string
  /** The provider target (ctx.fs path). */
  target?: FsTarget
  /** Reached by descending (not the listed path itself): its realpath is checked before reading. */
  nested?: boolean
}

export type LinkMode = 'follow' | 'keep'

/**
 * Where listings come from. Symlinks are followed (`follow`, the seed's plain mode: a link to a
 * directory lists as a directory, a dangling one as other) or kept as `symlink` entries.
 */
export interface DirSource {
  readonly kind: 'local' | 'provider'
  /** Whether it reports modification times, permissions and link text (ctx.fs does not). */
  readonly metadata: boolean
  children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]>
  /** The directory a child names, to descend into (never called for symlinks). */
  child(dir: Dir, name: string, from: Child): Dir
  /** Fill in size (and with `meta` mtime, mode, link text) for just these children. */
  details(dir: Dir, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Promise<void>
  /** How many direct children a directory has (one readdir, nothing else). */
  count(dir: Dir, signal: AbortSignal): Promise<number>
  /** The text of a small regular file in `dir` (a .gitignore); undefined when absent, unreadable or too large. */
  readSmall(dir: Dir, name: string, signal: AbortSignal): Promise<string | undefined>
  /** Whether `name` exists in `dir`, without following a final symlink. */
  exists(dir: Dir, name: string, signal: AbortSignal): Promise<boolean>
  /** The directory above (reached by its process path), undefined at the filesystem root. */
  parent(dir: Dir): Dir | undefined
}

/** One entry of the canonical value. */
export interface Entry {
  name: string
  type: EntryType
  size?: number
  /** Relative to the listed path, '/'-separated (recursive mode). */
  path?: string
  modified?: string
  permissions?: string
  target?: string
  error?: string
  /** Recursive and cut: the last shown entry of its directory while later siblings did not fit. */
  siblings_cut?: boolean
  /** Recursive: a directory shown as one line, not descended. */
  collapsed?: Collapsed
  /** A collapsed directory's direct children. */
  children?: number
}

interface Stats {
  total: number
  files: number
  directories: number
  others: number
  symlinks?: number
}

interface Truncated {
  shown: number
  total: number
  remaining: number
  /** Extension modes: the `offset` that continues where this result stopped. */
  next_offset?: number
}

/** The canonical JSON value of one call (seed 003's shape, plus the extension fields). */
export interface Listing {
  path: string
  entries: Entry[]
  stats: Stats
  truncated?: Truncated
  ignored?: number
  /** Recursive: files and other non-directories the repository's .gitignore files hide, when non-zero. */
  gitignored?: number
  /** Entries skipped before the first shown one (`offset`), when non-zero. */
  offset?: number
  /** True when the walk stopped counting at its budget: totals are lower bounds. */
  partial?: boolean
  /** Entries the type / pattern filters left out (extension modes), when non-zero. */
  filtered?: number
  /** `long` through a provider that reports no modification times, permissions or link text. */
  metadata_unavailable?: boolean
}
