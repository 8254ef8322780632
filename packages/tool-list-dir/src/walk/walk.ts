// The recursive walk as one object: it opens each directory (reads it), visits it (filters its entries, puts those that
// can be shown in order, lists or counts them and enters its subdirectories), and gives what it shows their details.
import { errnoOf, errnoReason } from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from '../args.ts'
import { checkAborted } from '../errors.ts'
import type { GitIgnore } from '../filters/gitignore.ts'
import type { Child } from '../types.ts'
import { type Compare, inOrder, orderOf } from './order.ts'
import type { Repo } from './repo.ts'
import type { Bare, Dir, DirSource } from './source.ts'
import { andThen, drive, isPromise, type Maybe, type Steps } from './steps.ts'

/** The walk stops descending here; totals past it are reported as lower bounds, never as exact. */
export const WALK_BUDGET = 200_000

/** Directories a recursive listing shows as one line unless `all`: VCS data, dependencies, caches. */
const HEAVY = new Set([
  '.git', 'node_modules', '__pycache__', '.venv', 'venv', '.tox', '.mypy_cache', '.pytest_cache', '.next', '.turbo',
])

/** Subdirectories read ahead of the pre-order visit: overlapped reads (one awaited readdir after another costs about 2x `find`). */
const READ_AHEAD = 16

/** Whether git ignores an entry of the directory being read. */
type Matcher = (name: string, directory: boolean) => boolean

/** A listed entry; `siblingsCut`: the last shown one of its directory while later siblings did not fit. */
export interface Item { child: Child, rel: string, siblingsCut?: boolean }

/** A directory and its read: the children, and the text of its own .gitignore when the walk uses one. */
type Reading<D> = [D, Maybe<Listed>]
interface Listed { children: Child[] | Bare, gitignore: string | undefined }

/** A directory being visited: its entries to list and enter, where it lies, the rules in effect there, what it shows. */
interface Frame<D> {
  dir: D
  children: Child[]
  prefix: string
  level: number
  rules: GitIgnore | undefined
  /** Read past a full window without filters: its entries are counted already, only its subdirectories are entered. */
  counted: boolean
  /** Its last shown entry, so a cut sibling list is drawn open (├──, │). */
  lastShown: Item | undefined
  shown: Child[]
}

/**
 * List a directory, or walk it to `depth` in pre-order; sorted before truncation, stats only for what is shown or sorted
 * on. Its steps are generators that wait only where a source's read is a promise: a local walk reads synchronously, its
 * source yielding to the event loop now and then, with no promise or microtask per directory.
 */
export class Walk<D extends Dir> {
  /** Up to `cap` listed entries after the first `offset`, each directory followed by its contents; and the totals. */
  readonly result = {
    shown: [] as Item[],
    total: 0,
    counts: { file: 0, directory: 0, symlink: 0, other: 0 },
    ignored: 0,
    gitignored: 0,
    filtered: 0,
    partial: false,
  }

  private readonly compare: Compare
  /** No filter but `ignore`: every entry takes a place in the window, which then only fills. */
  private readonly plain: boolean
  private readonly readAhead: number

  constructor(
    private readonly source: DirSource<D>,
    private readonly request: ListRequest,
    private readonly repo: Repo | undefined,
    private readonly signal: AbortSignal,
  ) {
    this.compare = orderOf(request)
    this.plain = request.pattern === undefined && request.only === undefined
    this.readAhead = source.readAhead ?? READ_AHEAD
  }

  async run(root: D): Promise<Walk<D>['result']> {
    try {
      await drive(this.visit(this.open(root), '', 1, this.repo?.rules))
    } finally {
      this.source.close?.()
    }
    return this.result
  }

  /** Once the window is full without filters, nothing more can be shown: what is read is only counted. */
  private full(): boolean {
    return this.plain && this.result.shown.length >= this.request.cap
  }

  /**
   * Start reading a directory; the read is settled at its visit, or dropped when the walk stops early. Once the window is
   * full (it only fills), what is read is only counted: bare, without an object per entry where the source can.
   */
  private open(dir: D): Reading<D> {
    const { source, request, signal } = this
    let listed: Maybe<Listed>
    try {
      const { links } = request
      const read = this.full() && source.bare !== undefined ? source.bare(dir, links, signal) : source.children(dir, links, signal)
      listed = isPromise(read) ? read.then((children) => this.withGitignore(dir, children)) : this.withGitignore(dir, read)
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

  private withGitignore(dir: D, children: Child[] | Bare): Maybe<Listed> {
    if (this.repo === undefined || !hasGitignore(children)) return { children, gitignore: undefined }
    return andThen(this.source.readSmall(dir, '.gitignore', this.signal), (gitignore) => ({ children, gitignore }))
  }

  /**
   * A directory once read: its rules, its entries filtered and put in order, listed or counted, entered; then details. A
   * read answered at once goes on without a step of its own: no generator, promise or microtask per directory.
   */
  private* visit([dir, reading]: Reading<D>, prefix: string, level: number, inherited: GitIgnore | undefined): Steps<void> {
    const { request, source, signal } = this
    const { children: read, gitignore } = isPromise(reading) ? (yield reading) as Listed : reading
    const base = `${this.repo?.prefix ?? ''}${prefix === '' ? '' : `${prefix}/`}`
    const rules = gitignore === undefined || inherited === undefined ? inherited : inherited.with(base, gitignore)
    const gitignored = rules?.inDirectory(base)
    const deeper = level < request.depth
    const counted = this.full()
    let children
    if (Array.isArray(read)) {
      children = this.sift(read, gitignored, deeper, counted)
    } else {
      children = this.count(read, gitignored, deeper)
      if (children === undefined) {
        // A name it must use may stand for raw bytes: the directory is re-read exactly, and counted as children instead.
        const exact = (source.exact as NonNullable<DirSource['exact']>)(read, request.links, signal)
        children = this.sift(isPromise(exact) ? (yield exact) as Child[] : exact, gitignored, deeper, counted)
      }
    }
    if (!counted && (request.sort === 'size' || request.sort === 'modified')) {
      const sized = source.details(dir, children, request.links, request.sort === 'modified', signal)
      if (isPromise(sized)) yield sized
    }
    // Without filters each child takes a place in the window: only the first `places` of them can be shown, so only
    // they need ordering (the collator is most of a walk's CPU time); the rest are only counted, in any order.
    if (!counted) inOrder(children, this.compare, this.plain ? request.offset + request.cap - this.result.total : Infinity)
    const frame: Frame<D> = { dir, children, prefix, level, rules, counted, lastShown: undefined, shown: [] }
    yield* this.enter(frame)
    // Details of what is shown, while this directory is still open: through its handle, never by a path.
    if (frame.shown.length > 0) yield* this.detail(dir, frame.shown)
    source.release?.(dir)
  }

  /**
   * One indexed pass over a directory's children, no closure per entry (a walk's every entry goes through it): filters,
   * then collapsed directories. Past a full window (`counted`) only the directories to enter are kept, the rest counted.
   */
  private sift(all: Child[], gitignored: Matcher | undefined, deeper: boolean, counted: boolean): Child[] {
    const { request, result } = this
    const children: Child[] = []
    for (let index = 0; index < all.length; index++) {
      const child = all[index] as Child
      if (request.ignore !== undefined && request.ignore(child.name)) {
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
        this.tally(child.type)
        if (!deeper || !directory || child.collapsed !== undefined) continue
      }
      children.push(child)
    }
    return children
  }

  /**
   * Count a bare read and collect the directories to enter, in one indexed pass with counts in locals; undefined, nothing
   * counted, when a name it must use holds U+FFFD (an ignore glob's, a directory's, a gitignored file's).
   */
  private count(read: Bare, gitignored: Matcher | undefined, deeper: boolean): Child[] | undefined {
    const { items } = read
    const { ignore, skim } = this.request
    let files = 0
    let directories = 0
    let symlinks = 0
    let others = 0
    let ignored = 0
    let hidden = 0
    const entered: Child[] = []
    for (let index = 0; index < items.length; index++) {
      const item = items[index]
      const name = read.name(item)
      if (ignore !== undefined) {
        if (name.includes('\ufffd')) return undefined
        if (ignore(name)) {
          ignored++
          continue
        }
      }
      const type = read.type(item)
      if (type === 'directory') {
        if (name.includes('\ufffd')) return undefined
        directories++
        // A gitignored directory is counted and shown collapsed, never entered.
        if (deeper && !(gitignored !== undefined && gitignored(name, true)) && !(skim && HEAVY.has(name))) entered.push({ name, type })
        continue
      }
      if (gitignored !== undefined && gitignored(name, false)) {
        if (name.includes('\ufffd')) return undefined
        hidden++
        continue
      }
      if (type === 'file') files++
      else if (type === 'symlink') symlinks++
      else others++
    }
    const { result } = this
    result.total += files + directories + symlinks + others
    result.counts.file += files
    result.counts.directory += directories
    result.counts.symlink += symlinks
    result.counts.other += others
    result.ignored += ignored
    result.gitignored += hidden
    return entered
  }

  /**
   * A directory's entries in order: each listed (or only counted, past a full window), each subdirectory entered, its
   * read opened up to `readAhead` ahead of its visit. An unreadable one is reported on its entry, never fatal.
   */
  private* enter(frame: Frame<D>): Steps<void> {
    const { request, result } = this
    const { dir, children, prefix, level } = frame
    const deeper = level < request.depth
    // reads[k]: the k-th directory entered here, opened ahead; `scanned`: children looked at for them.
    const reads: (Reading<D> | undefined)[] = []
    let scanned = 0
    let visited = 0
    for (let index = 0; index < children.length; index++) {
      const child = children[index] as Child
      const descend = deeper && child.type === 'directory' && child.collapsed === undefined
      // Past a full window without filters, an entry not entered is only counted (most of a large walk's entries).
      if (!descend && this.full()) {
        result.total++
        this.tally(child.type)
        if (frame.lastShown !== undefined) frame.lastShown.siblingsCut = true
        continue
      }
      // The relative path only where it is used (a pattern, a shown entry, a directory to enter): no string per counted file.
      const rel = request.pattern !== undefined || descend || (result.total >= request.offset && result.shown.length < request.cap)
        ? prefix === '' ? child.name : `${prefix}/${child.name}`
        : child.name
      const listed = (request.only === undefined || child.type === request.only) && (request.pattern?.(rel) ?? true)
      if (listed && !frame.counted) this.list(frame, child, rel)
      else if (!listed) result.filtered++
      if (!descend) continue
      visited++
      // Every child of a directory already read is counted; the budget only stops descending.
      if (result.total >= WALK_BUDGET) {
        result.partial = true
        continue
      }
      while (reads.length < visited + this.readAhead && scanned < children.length) {
        const ahead = children[scanned++] as Child
        if (ahead.type === 'directory' && ahead.collapsed === undefined) reads.push(this.open(this.source.child(dir, ahead.name, ahead)))
      }
      try {
        const next = reads[visited - 1] ?? this.open(this.source.child(dir, child.name, child))
        // Let go of a visited read: its entries would otherwise live (and be copied by the GC) until this directory ends.
        reads[visited - 1] = undefined
        yield* this.visit(next, rel, level + 1, frame.rules)
      } catch (error) {
        checkAborted(this.signal)
        // Listed even when the filters would hide it: the gap is never silent.
        child.error = describeError(error)
        if (!listed) {
          result.filtered--
          this.list(frame, child, rel)
        }
      }
    }
  }

  /** Take a place in the window: shown if it falls in it, else only counted (its directory's last shown entry then cut). */
  private list(frame: Frame<D>, child: Child, rel: string): void {
    const { result } = this
    result.total++
    this.tally(child.type)
    if (result.total > this.request.offset && result.shown.length < this.request.cap) {
      frame.lastShown = { child, rel }
      result.shown.push(frame.lastShown)
      frame.shown.push(child)
    } else if (frame.lastShown !== undefined) {
      frame.lastShown.siblingsCut = true
    }
  }

  /** Sizes (and in long mode times, permissions, link text) of what is shown; a collapsed directory's direct-children count. */
  private* detail(dir: D, shown: Child[]): Steps<void> {
    const { source, signal } = this
    const detailed = source.details(dir, shown, this.request.links, this.request.links === 'keep', signal)
    if (isPromise(detailed)) yield detailed
    const failed = (child: Child) => (error: unknown): void => {
      checkAborted(signal)
      child.error = describeError(error)
    }
    // One readdir each, shown ones only, all at once.
    const counting: Promise<void>[] = []
    for (const child of shown) {
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

  // Named increments: `counts[child.type]++` (a keyed store per entry) measured as the walk's costliest line.
  private tally(type: Child['type']): void {
    const { counts } = this.result
    if (type === 'file') counts.file++
    else if (type === 'directory') counts.directory++
    else if (type === 'symlink') counts.symlink++
    else counts.other++
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
