import { checkAborted } from './errors.ts'
import { HEAVY, type GitIgnore, type Repo } from './gitignore.ts'
import type { Child, Dir, DirSource, LinkMode } from './types.ts'
import { compareBy, type SortKey } from './sort.ts'

/** The walk stops counting here; totals past it are reported as lower bounds, never as exact. */
export const WALK_BUDGET = 200_000

/**
 * Subdirectories read ahead of the pre-order visit, per directory being visited: the reads
 * overlap (one awaited readdir after another costs about 2x `find` on a source tree).
 */
const READ_AHEAD = 16

export interface WalkOptions {
  /** Levels shown below the listed directory (1 = direct children). */
  depth: number
  links: LinkMode
  ignore: (name: string) => boolean
  pattern: ((relativePath: string) => boolean) | undefined
  only: 'files' | 'directories' | undefined
  sort: SortKey
  reverse: boolean
  /** Fill in modified / permissions / link text for shown entries. */
  meta: boolean
  /** Most entries shown. */
  cap: number
  /** Listed entries skipped before the first shown one. */
  offset: number
  /** Recursive mode: the repository whose .gitignore files apply (gitignored directories are one line, files hidden). */
  repo: Repo | undefined
  /** Recursive mode: directories of the heavy set are one line. */
  heavy: boolean
  signal: AbortSignal
}

interface Item {
  child: Child
  /** Relative path, '/'-separated. */
  rel: string
  dir: Dir
  /** The last shown entry of its directory while later siblings did not fit. */
  siblingsCut?: boolean
}

export interface Walk {
  /** Up to `cap` listed entries after the first `offset`, in render order (each directory followed by its contents). */
  shown: Item[]
  /** Listed entries in all (after ignore and filters, before truncation). */
  total: number
  counts: { files: number, directories: number, symlinks: number, others: number }
  ignored: number
  /** Non-directories the .gitignore files hide. */
  gitignored: number
  filtered: number
  /** The budget stopped the walk: counts are lower bounds. */
  partial: boolean
}

/** A directory as read: its children, and the text of its own .gitignore when the walk uses one. */
interface Listed {
  children: Child[]
  gitignore: string | undefined
}

/**
 * List a directory, or walk it to `depth` in pre-order with each directory's children in their
 * own sorted order. Sorting happens before truncation; details (stats) are fetched only for the
 * entries shown, or for a whole directory when its sort order needs them.
 */
export async function walk(source: DirSource, root: Dir, options: WalkOptions): Promise<Walk> {
  const compare = compareBy(options.sort, options.reverse)
  const sortNeeds = options.sort === 'size' || options.sort === 'modified'
  const result: Walk = {
    shown: [],
    total: 0,
    counts: { files: 0, directories: 0, symlinks: 0, others: 0 },
    ignored: 0,
    gitignored: 0,
    filtered: 0,
    partial: false,
  }
  /** Count a listed entry; true when it is shown (past the offset, within the cap). */
  const list = (item: Item): boolean => {
    result.total++
    const type = item.child.type
    if (type === 'file') result.counts.files++
    else if (type === 'directory') result.counts.directories++
    else if (type === 'symlink') result.counts.symlinks++
    else result.counts.others++
    if (result.total <= options.offset || result.shown.length >= options.cap) return false
    result.shown.push(item)
    return true
  }

  /**
   * Start reading a directory (and, in a repository, its own .gitignore when it has one); the
   * result is awaited later, or dropped when the walk stops early.
   */
  const read = (dir: Dir): Promise<Listed> => {
    const listed = source.children(dir, options.links, options.signal).then(async (children): Promise<Listed> => {
      const hasRules = options.repo !== undefined && children.some((child) => child.name === '.gitignore' && child.type === 'file')
      return { children, gitignore: hasRules ? await source.readSmall(dir, '.gitignore', options.signal) : undefined }
    })
    listed.catch(() => undefined)
    return listed
  }

  const visit = async (dir: Dir, reading: Promise<Listed>, prefix: string, level: number, inherited?: GitIgnore): Promise<void> => {
    const { children: all, gitignore } = await reading
    const base = `${options.repo?.prefix ?? ''}${prefix === '' ? '' : `${prefix}/`}`
    const rules = gitignore === undefined || inherited === undefined ? inherited : inherited.with(base, gitignore)
    const children = all.filter((child) => {
      if (options.ignore(child.name)) {
        result.ignored++
        return false
      }
      const directory = child.type === 'directory'
      if (rules?.ignores(base, child.name, directory) === true) {
        if (!directory) {
          result.gitignored++
          return false
        }
        child.collapsed = 'gitignored'
      } else if (directory && options.heavy && HEAVY.has(child.name)) {
        child.collapsed = 'heavy'
      }
      return true
    })
    if (sortNeeds) await source.details(dir, children, options.links, options.sort === 'modified', options.signal)
    children.sort(compare)
    // The last shown entry of this directory, so a cut sibling list is drawn open (├──, │).
    let lastShown: Item | undefined
    const listHere = (item: Item): void => {
      if (list(item)) lastShown = item
      else if (lastShown !== undefined) lastShown.siblingsCut = true
    }
    const subdirs = level < options.depth ? children.filter((child) => child.type === 'directory' && child.collapsed === undefined) : []
    const reads = new Map<Child, [Dir, Promise<Listed>]>()
    let visited = 0
    for (const child of children) {
      const item: Item = { child, rel: prefix === '' ? child.name : `${prefix}/${child.name}`, dir }
      const listed = passes(child, item.rel, options)
      if (listed) listHere(item)
      else result.filtered++
      if (child.type !== 'directory' || child.collapsed !== undefined || level >= options.depth) continue
      visited++
      // Every child of a directory already read is counted; the budget only stops descending.
      if (result.total >= WALK_BUDGET) {
        result.partial = true
        continue
      }
      for (const ahead of subdirs.slice(reads.size, visited + READ_AHEAD)) {
        const subdir = source.child(dir, ahead.name, ahead)
        reads.set(ahead, [subdir, read(subdir)])
      }
      const pending = reads.get(child)
      const subdir = pending?.[0] ?? source.child(dir, child.name, child)
      const sublisted = pending?.[1] ?? read(subdir)
      try {
        await visit(subdir, sublisted, item.rel, level + 1, rules)
      } catch (error) {
        checkAborted(options.signal)
        // An unreadable or vanished subdirectory is reported on its entry, not fatal; it is
        // listed even when the filters would hide it, so the gap is never silent.
        child.error = describeError(error)
        if (!listed) {
          result.filtered--
          listHere(item)
        }
      }
    }
  }

  await visit(root, read(root), '', 1, options.repo?.rules)
  await Promise.all([fetchDetails(source, result.shown, options), countCollapsed(source, result.shown, options.signal)])
  return result
}

/** A collapsed directory shows how many direct children it has: one readdir each, for the shown ones only. */
async function countCollapsed(source: DirSource, shown: Item[], signal: AbortSignal): Promise<void> {
  await Promise.all(shown.filter((item) => item.child.collapsed !== undefined).map(async ({ child, dir }) => {
    try {
      child.children = await source.count(source.child(dir, child.name, child), signal)
    } catch (error) {
      checkAborted(signal)
      child.error = describeError(error)
    }
  }))
}

function passes(child: Child, rel: string, options: WalkOptions): boolean {
  if (options.only === 'files' && child.type !== 'file') return false
  if (options.only === 'directories' && child.type !== 'directory') return false
  return options.pattern === undefined || options.pattern(rel)
}

/** Stat the shown entries, one batch per directory. */
async function fetchDetails(source: DirSource, shown: Item[], options: WalkOptions): Promise<void> {
  const byDir = new Map<Dir, Child[]>()
  for (const item of shown) {
    const group = byDir.get(item.dir)
    if (group) group.push(item.child)
    else byDir.set(item.dir, [item.child])
  }
  await Promise.all([...byDir].map(([dir, children]) => source.details(dir, children, options.links, options.meta, options.signal)))
}

function describeError(error: unknown): string {
  const code = (error as { code?: string }).code
  if (code === 'EACCES' || code === 'EPERM' || code === 'FS_PERMISSION_DENIED') return 'permission denied'
  if (code === 'ENOENT' || code === 'FS_NOT_FOUND') return 'vanished during listing'
  if (code === 'ENOTDIR' || code === 'FS_NOT_DIRECTORY') return 'no longer a directory'
  if (code === 'CHANGED') return 'changed during listing'
  return (error as Error).message || 'unreadable'
}
