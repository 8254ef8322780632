// The recursive walk: reads each directory once, filters, sorts and cuts to the window, and counts what lies past it.
import { compareNames, errnoOf, errnoReason } from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from './args.ts'
import { checkAborted } from './errors.ts'
import { HEAVY, type GitIgnore, type Repo } from './gitignore.ts'
import { drive, isPromise, type Maybe, settle, type Steps, andThen } from './steps.ts'
import type { Bare, Child, Dir, DirSource } from './types.ts'

/** The walk stops descending here; totals past it are reported as lower bounds, never as exact. */
export const WALK_BUDGET = 200_000

/** Subdirectories read ahead of the pre-order visit: overlapped reads (one awaited readdir after another costs about 2x `find`). */
const READ_AHEAD = 16

type Compare = (a: Child, b: Child) => number
/** Whether git ignores an entry of the directory being read. */
type Matcher = (name: string, directory: boolean) => boolean

const GROUP: Record<Child['type'], number> = { directory: 0, file: 1, symlink: 2, other: 2 }
const TYPES = ['file', 'directory', 'symlink', 'other'] as const

// common's name order: the locale's; names it finds equal (NFC vs NFD) fall back to code points, never to readdir's order.
const byName: Compare = (a, b) => compareNames(a.name, b.name)

/** `type` is the README's order (directories, files, the rest); `size` / `modified` put the largest / newest first (`ls -S` / `ls -t`). */
const ORDERS: Record<ListRequest['sort'], Compare> = {
  type: (a, b) => GROUP[a.type] - GROUP[b.type] || byName(a, b),
  name: byName,
  size: (a, b) => (b.size ?? -1) - (a.size ?? -1) || byName(a, b),
  modified: (a, b) => (b.mtimeMs ?? 0) - (a.mtimeMs ?? 0) || byName(a, b),
}

/** A listed entry; `siblingsCut`: the last shown one of its directory while later siblings did not fit. */
interface Item { child: Child, rel: string, siblingsCut?: boolean }

/** A directory and its read: the children, and the text of its own .gitignore when the walk uses one. */
type Reading = [Dir, Maybe<Listed>]
interface Listed { children: Child[] | Bare, gitignore: string | undefined }

/**
 * List a directory, or walk it to `depth` in pre-order; sorted before truncation, stats only for what is shown or sorted on.
 * The walk is steps (a generator) that wait only where a source's read is a promise: a local walk reads synchronously, its
 * source yielding to the event loop now and then, with no promise or microtask per directory.
 */
export async function walk(
  source: DirSource, root: Dir, request: ListRequest, repo: Repo | undefined, signal: AbortSignal, options: WalkOptions = {},
) {
  const order = ORDERS[request.sort]
  const readAhead = source.readAhead ?? READ_AHEAD
  const compare: Compare = request.reverse ? (a, b) => order(b, a) : order
  const counts = { file: 0, directory: 0, symlink: 0, other: 0 }
  // Named increments: `counts[child.type]++` (a keyed store per entry) measured as the walk's costliest line.
  const tally = (type: Child['type']): void => {
    if (type === 'file') counts.file++
    else if (type === 'directory') counts.directory++
    else if (type === 'symlink') counts.symlink++
    else counts.other++
  }
  // shown: up to `cap` listed entries after the first `offset`, each directory followed by its contents.
  const result = { shown: [] as Item[], total: 0, counts, ignored: 0, gitignored: 0, filtered: 0, partial: false }

  const ignore = request.ignore
  const plain = request.pattern === undefined && request.only === undefined
  const bare = source.bare?.bind(source)
  const { helper, budget } = options
  // Subtrees handed to the helper: counted at the end (what it has not claimed by then, here).
  const helped: Handed[] = []
  // The directories being visited, the listed one first.
  const frames: Frame[] = []
  const overBudget = (): boolean => (budget === undefined ? result.total : budget.spent(result.total)) >= WALK_BUDGET

  const withGitignore = (dir: Dir, children: Child[] | Bare): Maybe<Listed> => {
    if (repo === undefined || !hasGitignore(children)) return { children, gitignore: undefined }
    return andThen(source.readSmall(dir, '.gitignore', signal), (gitignore) => ({ children, gitignore }))
  }
  // Start reading a directory; the read is settled at its visit, or dropped when the walk stops early. Once the window is
  // full without filters (it only fills), what is read is only counted: bare, without an object per entry where it can be.
  const open = (dir: Dir): Reading => {
    const counted = plain && result.shown.length >= request.cap
    let listed: Maybe<Listed>
    try {
      const read = counted && bare !== undefined ? bare(dir, request.links, signal) : source.children(dir, request.links, signal)
      listed = isPromise(read) ? read.then((children) => withGitignore(dir, children)) : withGitignore(dir, read)
    } catch (error) {
      listed = Promise.reject(error)
    }
    if (!isPromise(listed)) return [dir, listed]
    const failing = listed.catch((error: unknown) => {
      source.release?.(dir)
      throw error
    })
    failing.catch(() => undefined) // dropped unvisited when the walk stops early: never an unhandled rejection
    return [dir, failing]
  }

  /**
   * Count a bare read and collect the directories to enter, in one indexed pass with counts in locals; false, nothing
   * counted, when a name it must use holds U+FFFD (an ignore glob's, a directory's, a gitignored file's).
   */
  const countBare = (read: Bare, gitignored: Matcher | undefined, deeper: boolean, children: Child[]): boolean => {
    const { items } = read
    const skim = request.skim
    let files = 0
    let directories = 0
    let symlinks = 0
    let others = 0
    let ignored = 0
    let hidden = 0
    for (let index = 0; index < items.length; index++) {
      const item = items[index]
      const name = read.name(item)
      if (ignore !== undefined) {
        if (name.includes('\ufffd')) return false
        if (ignore(name)) {
          ignored++
          continue
        }
      }
      const type = read.type(item)
      if (type === 'directory') {
        if (name.includes('\ufffd')) return false
        directories++
        // A gitignored directory is counted and shown collapsed, never entered.
        if (deeper && !(gitignored !== undefined && gitignored(name, true)) && !(skim && HEAVY.has(name))) children.push({ name, type })
        continue
      }
      if (gitignored !== undefined && gitignored(name, false)) {
        if (name.includes('\ufffd')) return false
        hidden++
        continue
      }
      if (type === 'file') files++
      else if (type === 'symlink') symlinks++
      else others++
    }
    result.total += files + directories + symlinks + others
    counts.file += files
    counts.directory += directories
    counts.symlink += symlinks
    counts.other += others
    result.ignored += ignored
    result.gitignored += hidden
    return true
  }

  function* visit([dir, reading]: Reading, prefix: string, level: number, inherited?: GitIgnore): Steps<void> {
    const { children: read, gitignore } = yield* settle(reading)
    const base = `${repo?.prefix ?? ''}${prefix === '' ? '' : `${prefix}/`}`
    const rules = gitignore === undefined || inherited === undefined ? inherited : inherited.with(base, gitignore)
    const gitignored = rules?.inDirectory(base)
    const deeper = level < request.depth
    // Without filters, once the window is full nothing here can be shown: each entry is counted in the filter pass, in
    // readdir's order, unsorted and without details, and only the directories to enter go on (most entries of a large walk).
    const counted = plain && result.shown.length >= request.cap
    // One indexed pass, no closure per entry (a walk's every entry goes through it): filters, then collapsed directories.
    const children: Child[] = []
    // Read bare (so counted, as the window only fills): counted here, an object only for each directory to enter. A name it
    // must use that may stand for raw bytes has the directory re-read exactly, and counted as children instead.
    let all = Array.isArray(read) ? read : []
    if (!Array.isArray(read) && !countBare(read, gitignored, deeper, children)) {
      children.length = 0
      all = yield* settle((source.exact as NonNullable<DirSource['exact']>)(read, request.links, signal))
    }
    for (let index = 0; index < all.length; index++) {
      const child = all[index] as Child
      if (ignore !== undefined && ignore(child.name)) {
        result.ignored++
        continue
      }
      const directory = child.type === 'directory'
      if (gitignored !== undefined && gitignored(child.name, directory)) {
        if (!directory) {
          result.gitignored++
          continue
        }
        child.collapsed = 'gitignored'
      } else if (directory && request.skim && HEAVY.has(child.name)) {
        child.collapsed = 'heavy'
      }
      if (counted) {
        result.total++
        tally(child.type)
        if (!deeper || !directory || child.collapsed !== undefined) continue
      }
      children.push(child)
    }
    if (!counted && (request.sort === 'size' || request.sort === 'modified')) {
      yield* settle(source.details(dir, children, request.links, request.sort === 'modified', signal))
    }
    // Without filters each child takes a place in the window: only the first `places` of them can be shown, so only
    // they need ordering (the collator is most of a walk's CPU time); the rest are only counted, in any order.
    if (!counted) inOrder(children, compare, plain ? request.offset + request.cap - result.total : Infinity)
    // This directory's place in the walk: its children, the one being visited, those handed to the helper, and its last
    // shown entry (so a cut sibling list is drawn open: ├──, │). A helper may take later children of any directory open.
    const frame: Frame = { dir, children, index: 0, scanned: 0, handed: undefined, prefix, level, rules, counted, lastShown: undefined }
    const shownHere: Child[] = []
    const list = (child: Child, rel: string): void => {
      result.total++
      tally(child.type)
      if (result.total > request.offset && result.shown.length < request.cap) {
        frame.lastShown = { child, rel }
        result.shown.push(frame.lastShown)
        shownHere.push(child)
      } else if (frame.lastShown !== undefined) {
        frame.lastShown.siblingsCut = true
      }
    }
    // reads[k]: the k-th directory entered here, opened up to `readAhead` ahead of its visit; `scanned`: children looked at for it.
    const reads: (Reading | undefined)[] = []
    let visited = 0
    frames.push(frame)
    try {
      for (; frame.index < children.length; frame.index++) {
        const child = children[frame.index] as Child
        if (frame.handed?.has(child) === true) continue
        const descend = deeper && child.type === 'directory' && child.collapsed === undefined
        // Past a full window without filters, an entry not entered is only counted (most of a large walk's entries).
        if (plain && !descend && result.shown.length >= request.cap) {
          result.total++
          tally(child.type)
          if (frame.lastShown !== undefined) frame.lastShown.siblingsCut = true
          continue
        }
        // The relative path only where it is used (a pattern, a shown entry, a directory to enter): no string per counted file.
        const rel = request.pattern !== undefined || descend || (result.total >= request.offset && result.shown.length < request.cap)
          ? prefix === '' ? child.name : `${prefix}/${child.name}`
          : child.name
        const listed = (request.only === undefined || child.type === request.only) && (request.pattern?.(rel) ?? true)
        if (listed && !counted) list(child, rel)
        else if (!listed) result.filtered++
        if (!descend) continue
        visited++
        // Every child of a directory already read is counted; the budget only stops descending.
        if (overBudget()) {
          result.partial = true
          continue
        }
        // Past a full window without filters what is left is only counted: the helper, when free, takes the later half of
        // the directories still to enter in the shallowest directory open (the most work in one hand-off).
        if (helper !== undefined && plain && result.shown.length >= request.cap && helper.free()) handOff(helper)
        while (reads.length < visited + readAhead && frame.scanned < children.length) {
          const ahead = children[frame.scanned++] as Child
          if (ahead.type === 'directory' && ahead.collapsed === undefined && frame.handed?.has(ahead) !== true) {
            reads.push(open(source.child(dir, ahead.name, ahead)))
          }
        }
        try {
          const next = reads[visited - 1] ?? open(source.child(dir, child.name, child))
          // Let go of a visited read: its entries would otherwise live (and be copied by the GC) until this directory ends.
          reads[visited - 1] = undefined
          yield* visit(next, rel, level + 1, rules)
        } catch (error) {
          checkAborted(signal)
          // Reported on its entry, not fatal, and listed even when the filters would hide it: the gap is never silent.
          child.error = describeError(error)
          if (!listed) {
            result.filtered--
            list(child, rel)
          }
        }
      }
    } finally {
      frames.pop()
    }
    // Details of what is shown, while this directory is still open: through its handle, never by a path.
    if (shownHere.length > 0) yield* shown(dir, shownHere)
    source.release?.(dir)
  }

  function* shown(dir: Dir, shownHere: Child[]): Steps<void> {
    yield* settle(source.details(dir, shownHere, request.links, request.links === 'keep', signal))
    // A collapsed directory shows how many direct children it has: one readdir each, shown ones only, all at once.
    const failed = (child: Child) => (error: unknown): void => {
      checkAborted(signal)
      child.error = describeError(error)
    }
    const counting: Promise<void>[] = []
    for (const child of shownHere) {
      if (child.collapsed === undefined) continue
      try {
        const count = source.count(source.child(dir, child.name, child), signal)
        if (isPromise(count)) counting.push(count.then((children) => { child.children = children }, failed(child)))
        else child.children = count
      } catch (error) {
        failed(child)(error)
      }
    }
    if (counting.length > 0) yield Promise.all(counting)
  }

  /**
   * Hand the helper the later half of the directories still to enter in the shallowest open directory that has any; each
   * is counted there as an entry unless that directory was read bare (its entries are counted already).
   */
  const handOff = (to: CountHelper): void => {
    for (const frame of frames) {
      const left: Child[] = []
      for (let index = Math.max(frame.index + 1, frame.scanned); index < frame.children.length; index++) {
        const child = frame.children[index] as Child
        if (child.type === 'directory' && child.collapsed === undefined && frame.handed?.has(child) !== true) left.push(child)
      }
      if (left.length === 0 || frame.level >= request.depth) continue
      const taken = left.slice(left.length >> 1)
      const rels = taken.map((child) => frame.prefix === '' ? child.name : `${frame.prefix}/${child.name}`)
      helped.push(to.count(frame.dir, taken.map((child) => child.name), rels, frame.level + 1, frame.rules))
      frame.handed ??= new Set()
      for (const child of taken) frame.handed.add(child)
      if (!frame.counted) {
        result.total += taken.length
        counts.directory += taken.length
      }
      if (frame.lastShown !== undefined) frame.lastShown.siblingsCut = true
      return
    }
  }

  try {
    const start = options.start
    await drive(visit(open(root), start?.prefix ?? '', start?.level ?? 1, start === undefined ? repo?.rules : start.rules))
    const more = noTotals()
    for (let part = helped.shift(); part !== undefined; part = helped.shift()) {
      addTotals(more, await part.settle())
      checkAborted(signal)
    }
    const { total, ignored, gitignored, partial, ...kinds } = more
    result.total += total
    result.ignored += ignored
    result.gitignored += gitignored
    result.partial ||= partial
    for (const kind of TYPES) counts[kind] += kinds[kind]
  } finally {
    source.close?.()
    for (const part of helped) part.dropped()
  }
  return result
}

/** A directory being visited: see visit. */
interface Frame {
  dir: Dir
  children: Child[]
  index: number
  scanned: number
  handed: Set<Child> | undefined
  prefix: string
  level: number
  rules: GitIgnore | undefined
  counted: boolean
  lastShown: Item | undefined
}

/** What a helper counted in the subtrees it was handed: added to the walk's own totals. */
export interface Totals {
  total: number
  file: number
  directory: number
  symlink: number
  other: number
  ignored: number
  gitignored: number
  partial: boolean
}

export const noTotals = (): Totals => ({ total: 0, file: 0, directory: 0, symlink: 0, other: 0, ignored: 0, gitignored: 0, partial: false })

export function addTotals<T extends Totals>(into: T, from: Totals): T {
  into.total += from.total
  for (const kind of TYPES) into[kind] += from[kind]
  into.ignored += from.ignored
  into.gitignored += from.gitignored
  into.partial ||= from.partial
  return into
}

/** Counts subtrees beside a walk (in a thread of its own) while it is free: a walk hands it part of what it only counts. */
export interface CountHelper {
  free(): boolean
  /** Take the subtrees `names` of `dir` (at `rels`, each at `level`, under `rules`). */
  count(dir: Dir, names: string[], rels: string[], level: number, rules: GitIgnore | undefined): Handed
}

/** Subtrees handed on. */
export interface Handed {
  /** Once the walk's own part is done: count here what the helper has not claimed, and add what it counted. */
  settle(): Promise<Totals>
  /** The walk ended without settling: let go of them once the helper is done with them. */
  dropped(): void
}

/**
 * One walk's entries counted in two threads, against WALK_BUDGET: each thread publishes its own count in its cell and
 * reads the other's. `before`: what this thread had counted in earlier parts of the walk.
 */
export class SharedBudget {
  private readonly before: number

  constructor(private readonly cells: Int32Array, private readonly mine: 0 | 1) {
    this.before = Atomics.load(cells, mine)
  }

  spent(total: number): number {
    Atomics.store(this.cells, this.mine, this.before + total)
    return this.before + total + Atomics.load(this.cells, 1 - this.mine)
  }
}

export interface WalkOptions {
  helper?: CountHelper
  budget?: SharedBudget
  /** Where a helper's walk starts: the subtree's path below the listed directory, its level and the rules in effect there. */
  start?: { prefix: string, level: number, rules: GitIgnore | undefined }
}

/** Put the first `count` children in order (a bounded max-heap picks them, then they are sorted); the rest follow unordered. */
function inOrder(children: Child[], compare: Compare, count: number): void {
  if (count >= children.length || children.length <= 16) {
    children.sort(compare)
    return
  }
  if (count <= 0) return
  const heap: Child[] = [] // the `count` least so far, greatest at the top
  const rest: Child[] = []
  for (const child of children) {
    if (heap.length < count) {
      heap.push(child)
      siftUp(heap, heap.length - 1, compare)
    } else if (compare(child, heap[0] as Child) < 0) {
      rest.push(heap[0] as Child)
      heap[0] = child
      siftDown(heap, compare)
    } else {
      rest.push(child)
    }
  }
  heap.sort(compare)
  heap.forEach((child, index) => { children[index] = child })
  rest.forEach((child, index) => { children[heap.length + index] = child })
}

function siftUp(heap: Child[], at: number, compare: Compare): void {
  while (at > 0) {
    const up = (at - 1) >> 1
    if (compare(heap[at] as Child, heap[up] as Child) <= 0) return
    ;[heap[at], heap[up]] = [heap[up] as Child, heap[at] as Child]
    at = up
  }
}

function siftDown(heap: Child[], compare: Compare): void {
  for (let at = 0; ;) {
    const left = 2 * at + 1
    const right = left + 1
    let top = at
    if (left < heap.length && compare(heap[left] as Child, heap[top] as Child) > 0) top = left
    if (right < heap.length && compare(heap[right] as Child, heap[top] as Child) > 0) top = right
    if (top === at) return
    ;[heap[at], heap[top]] = [heap[top] as Child, heap[at] as Child]
    at = top
  }
}

/** Whether a directory holds a regular file named .gitignore (looked for in every directory a walk in a repository reads). */
function hasGitignore(children: readonly Child[] | Bare): boolean {
  if (Array.isArray(children)) {
    for (let index = 0; index < children.length; index++) {
      const child = children[index] as Child
      if (child.name === '.gitignore' && child.type === 'file') return true
    }
    return false
  }
  const listing = children as Bare
  for (let index = 0; index < listing.items.length; index++) {
    const item = listing.items[index]
    if (listing.name(item) === '.gitignore' && listing.type(item) === 'file') return true
  }
  return false
}

/** The provider's codes as the OS errors they stand for. */
const FS_ERRNO: Readonly<Record<string, string>> = { FS_PERMISSION_DENIED: 'EACCES', FS_NOT_FOUND: 'ENOENT', FS_NOT_DIRECTORY: 'ENOTDIR' }

/** An entry's error, a bare phrase in common's errno vocabulary (`permission denied`, `vanished during listing`). */
function describeError(error: unknown): string {
  const code = (error as { code?: string }).code ?? ''
  // Entries are opened by their parent's handle without following links: these mean the entry changed under the walk.
  if (code === 'ENOTDIR' || code === 'FS_NOT_DIRECTORY') return 'no longer a directory'
  if (code === 'ELOOP') return 'changed while it was being read'
  const errno = Object.hasOwn(FS_ERRNO, code) ? FS_ERRNO[code] : errnoOf(error)
  const said = errno === undefined ? undefined : errnoReason(errno, { path: 'it', during: 'during listing', it: '' })
  return said?.known === true ? said.reason : (error as Error).message || 'unreadable'
}
