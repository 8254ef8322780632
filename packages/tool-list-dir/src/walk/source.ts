// Where a walk's listings come from: the source interface, and the directory every source's own kind extends.
import type { Child } from '../types.ts'
import type { Maybe } from './steps.ts'

/** Largest small file a source reads (a .gitignore): far past any real one (git itself refuses files over 100 MiB). */
export const MAX_SMALL_FILE = 8 * 1024 * 1024

/**
 * A directory as the walk and the listing see it: its display path, and its process path where the listing placed it
 * (the listed directory and those above it). Each source extends it with how it reaches a directory.
 */
export interface Dir {
  readonly display: string
  readonly local?: string
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

/** `follow`, the plain mode: a link to a directory lists as a directory, a dangling one as other. */
export type LinkMode = 'follow' | 'keep'

/**
 * Where listings come from: node:fs (the fast path) or ctx.fs; only the first reports times, permissions and link text
 * (`metadata`). A read may answer at once (a value) or later (a promise): the walk waits only for promises. `D`: the
 * source's own directories, which only it makes (`child`, `parent`) and reads.
 */
export interface DirSource<D extends Dir = Dir> {
  readonly kind: 'local' | 'provider'
  readonly metadata: boolean
  /** Every directory is read through a handle whose identity was checked (the listed one's against its resolved path). */
  readonly pinned?: boolean
  /** Subdirectories the walk reads ahead of its visit (default 16): worth it where reads wait on a thread pool or a provider. */
  readonly readAhead?: number
  children(dir: D, links: LinkMode, signal: AbortSignal): Maybe<Child[]>
  /** The same read without an object of ours per entry, for a directory a walk only counts; children where it cannot be. */
  bare?(dir: D, links: LinkMode, signal: AbortSignal): Maybe<Bare | Child[]>
  /** A bare read's entries as children, each name exactly as on disk (for a walk that must use a name holding U+FFFD). */
  exact?(read: Bare, links: LinkMode, signal: AbortSignal): Maybe<Child[]>
  /** The directory a child names, to descend into (never called for symlinks). */
  child(dir: D, name: string, from: Child): D
  /** Fill in size (and with `meta` mtime, mode, link text) for just these children. */
  details(dir: D, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Maybe<void>
  count(dir: D, signal: AbortSignal): Maybe<number>
  /** For .gitignore files: a small regular file's text, undefined when absent, unreadable or over MAX_SMALL_FILE. */
  readSmall(dir: D, name: string, signal: AbortSignal): Maybe<string | undefined>
  /** Whether `name` exists in `dir`, not following a final symlink. */
  exists(dir: D, name: string, signal: AbortSignal): Maybe<boolean>
  /** Let go of what reading `dir` holds (its handle); `close` lets go of everything still held. */
  release?(dir: D): void
  close?(): void
  /** The directory above (by its process path), undefined at the filesystem root. */
  parent(dir: D): D | undefined
}
