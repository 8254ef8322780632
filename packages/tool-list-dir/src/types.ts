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
}

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
}

export interface Stats {
  total: number
  files: number
  directories: number
  others: number
  symlinks?: number
}

export interface Truncated {
  shown: number
  total: number
  remaining: number
  /** Extension modes: the directory to list next to continue where this result stopped. */
  next_path?: string
}

/** The canonical JSON value of one call (seed 003's shape, plus the extension fields). */
export interface Listing {
  path: string
  entries: Entry[]
  stats: Stats
  truncated?: Truncated
  ignored?: number
  /** True when the walk stopped counting at its budget: totals are lower bounds. */
  partial?: boolean
  /** Entries the type / pattern filters left out (extension modes), when non-zero. */
  filtered?: number
  /** `long` through a provider that reports no modification times, permissions or link text. */
  metadata_unavailable?: boolean
}
