// list_directory's value schema and the types inferred from it, and the listing source interface.
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object } from '@gencode-ai/dsh-tool-common'
import type { Maybe } from './steps.ts'

const integer = { type: 'integer' } as const
const count = { type: 'integer', required: true } as const
const text = { type: 'string' } as const
const flag = { type: 'boolean' } as const

/** The canonical value's schema (the README's Canonical value section). */
export const LISTING_SCHEMA = object({
  path: { type: 'string', required: true },
  entries: {
    type: 'array',
    required: true,
    items: object({
      name: { type: 'string', required: true },
      type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'], required: true },
      size: integer,
      path: text,
      modified: text,
      permissions: text,
      target: text,
      error: text,
      /** Recursive and cut: the last shown entry of its directory while later siblings did not fit. */
      siblings_cut: flag,
      /** Recursive: a directory shown as one line (with its direct-children count), not descended. */
      collapsed: { type: 'string', enum: ['gitignored', 'heavy'] },
      children: integer,
    }),
  },
  stats: { ...object({ total: count, files: count, directories: count, others: count, symlinks: integer }), required: true },
  truncated: object({ shown: count, total: count, remaining: count, next_offset: integer }),
  ignored: integer,
  gitignored: integer,
  /** Git's index could not be read (or not through this provider): `.gitignore` may have hidden tracked files. */
  tracked_unknown: flag,
  offset: integer,
  filtered: integer,
  /** The walk stopped counting at its budget: totals are lower bounds. */
  partial: flag,
  metadata_unavailable: flag,
})

export type Listing = InferValue<typeof LISTING_SCHEMA>
export type Entry = Listing['entries'][number]

/** One child of a directory as a source reports it, before filtering and shaping; `mode`: st_mode's permission bits. */
export interface Child extends Pick<Entry, 'name' | 'type' | 'size' | 'target' | 'error' | 'collapsed' | 'children'> {
  mtimeMs?: number
  mode?: number
}

/**
 * A directory's entries as the source read them (its own items), with their names and types read through it. A name is
 * as decoded: one holding U+FFFD may stand for bytes that are not UTF-8, which `exact` gives back as they are.
 */
export interface Bare<T = unknown> {
  items: readonly T[]
  name(item: T): string
  type(item: T): Child['type']
}

/** A directory to read: its display path, plus the process path (local) or provider target it is reached by. */
export interface Dir {
  display: string
  local?: string
  target?: FsTarget
  nested?: boolean // reached by descending: checked to still be a directory, not a link, when read
  /** Reached by descending: the directory it was listed in, and its name there (it is opened from its parent's handle). */
  parent?: Dir
  name?: string
}

/** `follow`, the plain mode: a link to a directory lists as a directory, a dangling one as other. */
export type LinkMode = 'follow' | 'keep'

/**
 * Where listings come from: node:fs (the fast path) or ctx.fs; only the first reports times, permissions and link text
 * (`metadata`). A read may answer at once (a value) or later (a promise): the walk waits only for promises.
 */
export interface DirSource {
  readonly kind: 'local' | 'provider'
  readonly metadata: boolean
  /** Every directory is read through a handle whose identity was checked (the listed one's against its resolved path). */
  readonly pinned?: boolean
  /** Subdirectories the walk reads ahead of its visit (default 16): worth it where reads wait on a thread pool or a provider. */
  readonly readAhead?: number
  children(dir: Dir, links: LinkMode, signal: AbortSignal): Maybe<Child[]>
  /** The same read without an object of ours per entry, for a directory a walk only counts; children where it cannot be. */
  bare?(dir: Dir, links: LinkMode, signal: AbortSignal): Maybe<Bare | Child[]>
  /** A bare read's entries as children, each name exactly as on disk (for a walk that must use a name holding U+FFFD). */
  exact?(read: Bare, links: LinkMode, signal: AbortSignal): Maybe<Child[]>
  /** The directory a child names, to descend into (never called for symlinks). */
  child(dir: Dir, name: string, from: Child): Dir
  /** Fill in size (and with `meta` mtime, mode, link text) for just these children. */
  details(dir: Dir, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Maybe<void>
  count(dir: Dir, signal: AbortSignal): Maybe<number>
  /** For .gitignore files: a small regular file's text, undefined when absent, unreadable or too large. */
  readSmall(dir: Dir, name: string, signal: AbortSignal): Maybe<string | undefined>
  /** Whether `name` exists in `dir`, not following a final symlink. */
  exists(dir: Dir, name: string, signal: AbortSignal): Maybe<boolean>
  /** Let go of what reading `dir` holds (its handle); `close` lets go of everything still held. */
  release?(dir: Dir): void
  close?(): void
  /** The directory above (by its process path), undefined at the filesystem root. */
  parent(dir: Dir): Dir | undefined
}
