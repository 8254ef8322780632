// The repository's .gitignore rules: what a recursive listing leaves out.
import ignore from 'ignore'
import type { Tracked } from './git-index.ts'
import { RuleRuns } from './rule-runs.ts'

/**
 * Rules in effect at once: in one .gitignore, in all of them, and those a path is tested against one by one (glob
 * patterns; every rule of a small file). A file that would pass one is not applied, and the listing says so.
 */
const MAX_FILE_RULES = 100_000
const MAX_RULES = 200_000
const MAX_PATTERNS = 1000
/** Up to this many rules a file goes whole to the `ignore` package; past it, literal rules become lookups (RuleRuns). */
const FEW_RULES = 200

/**
 * The .gitignore files in effect for one directory, deepest first. Git's precedence: the deepest file with a matching rule
 * decides, within a file the last match wins (negation included); a directory-only rule (`build/`) matches only directories.
 */
export class GitIgnore {
  /**
   * The last two characters (one, if an ending is that short) of every rule's literal ending, as marks in a table: a name
   * ending otherwise matches no rule, at one indexed read (a Set lookup per entry was a walk's costliest call). Two, as
   * most names end in `s` like `node_modules`, few in `es`.
   */
  private readonly tails: Uint8Array | undefined
  private readonly tailLength: number

  constructor(
    private readonly layers: readonly ReturnType<typeof layerOf>[] = [], private readonly scope?: TrackedScope,
    /** The .gitignore files (git-relative) left out for their rule counts, shared by every set derived from this one. */
    private readonly refused = new Set<string>(),
  ) {
    const endings = layers.map((layer) => layer.endings)
    const all = endings.every((list) => list !== undefined) ? endings.flat() : undefined
    this.tailLength = all?.every((ending) => ending.length >= 2) === true ? 2 : 1
    if (all === undefined) {
      this.tails = undefined
      return
    }
    this.tails = new Uint8Array(TAIL_MARKS)
    for (const ending of all) this.tails[tailOf(ending, this.tailLength)] = 1
  }

  /** These rules and the .gitignore at `base`, deepest first; itself when that file has too many rules (then refused). */
  with(base: string, text: string): GitIgnore {
    const lines = rulesOf(text)
    const rules = this.layers.reduce((sum, { count }) => sum + count, lines.length)
    const layer = lines.length > MAX_FILE_RULES || rules > MAX_RULES ? undefined : layerOf(base, text, lines)
    if (layer === undefined || this.layers.reduce((sum, { tested }) => sum + tested, layer.tested) > MAX_PATTERNS) {
      this.refused.add(`${base}.gitignore`)
      return this
    }
    return new GitIgnore([layer, ...this.layers], this.scope, this.refused)
  }

  /** The same rules for one walk, under git's rule that they never hide a tracked path (`entered`: as TrackedScope's). */
  tracking(tracked: Tracked, entered: readonly string[] = []): GitIgnore {
    return new GitIgnore(this.layers, new TrackedScope(tracked, entered), this.refused)
  }

  /** The .gitignore files not applied for their rule counts, git-relative, in the order met. */
  refusedFiles(): string[] {
    return [...this.refused]
  }

  /** What rebuilds these rules in another thread: each .gitignore's directory and text, the tracked scope's entered directories. */
  describe(): RulesText {
    return { layers: this.layers.map(({ base, text }) => ({ base, text })), entered: this.scope?.enteredDirs() ?? [] }
  }

  /** Rules described by `describe`, under `tracked` (read again by the thread that rebuilds them). */
  static from(description: RulesText, tracked: Tracked): GitIgnore {
    let rules = new GitIgnore()
    for (const { base, text } of description.layers.toReversed()) rules = rules.with(base, text)
    return rules.tracking(tracked, description.entered)
  }

  /** Whether git ignores the entry `name` of the directory `dir` (git-relative, '' or ending in '/'). */
  ignores(dir: string, name: string, directory: boolean): boolean {
    return this.inDirectory(dir)(name, directory)
  }

  /** `ignores` for the entries of one directory: what all of them share (the tracked scope's answer) is looked up once. */
  inDirectory(dir: string): (name: string, directory: boolean) => boolean {
    const scope = this.scope
    if (scope === undefined) return (name, directory) => this.matches(dir, name, directory)
    // Entering a directory adds only paths below `dir`: its own answer holds for all its entries.
    const inside = scope.inside(dir)
    return (name, directory) => (inside || this.matches(dir, name, directory)) && !scope.keeps(`${dir}${name}`, directory)
  }

  private matches(dir: string, name: string, directory: boolean): boolean {
    if (this.tails !== undefined && (name.length < this.tailLength || this.tails[tailOf(name, this.tailLength)] !== 1)) return false
    // Per entry: an indexed loop (for-of measured ~10% slower); a literal ending rules most names out before the µs-a-path matcher.
    for (let index = 0; index < this.layers.length; index++) {
      const layer = this.layers[index]
      if (layer === undefined || (layer.scanEndings && layer.endings !== undefined && !endsWithAny(name, layer.endings))) continue
      let result
      try {
        result = layer.rules.test(`${layer.byName ? '' : dir.slice(layer.base.length)}${name}${directory ? '/' : ''}`)
      } catch {
        return false // a name the matcher cannot take as a relative path
      }
      if (result.ignored) return true
      if (result.unignored) return false
    }
    return false
  }
}

/**
 * Tracked paths, and the excluded directories a walk entered because they hold some. Below those git ignores every
 * untracked path whatever the rules say (a parent's exclusion cannot be undone), and shows every tracked one.
 */
class TrackedScope {
  private readonly entered = new Set<string>()
  private lastDir: string | undefined
  private lastInside = false

  constructor(private readonly tracked: Tracked, entered: readonly string[]) {
    for (const dir of entered) this.entered.add(dir)
  }

  enteredDirs(): string[] {
    return [...this.entered]
  }

  /** Whether `dir` ('' or ending in '/') lies in an excluded directory entered for its tracked paths. */
  inside(dir: string): boolean {
    if (this.entered.size === 0) return false
    if (dir === this.lastDir) return this.lastInside
    let inside = false
    for (let at = dir.indexOf('/'); at !== -1 && !inside; at = dir.indexOf('/', at + 1)) inside = this.entered.has(dir.slice(0, at + 1))
    this.lastDir = dir
    this.lastInside = inside
    return inside
  }

  /** Whether an excluded path stays shown: tracked, or a directory holding tracked paths (then entered). */
  keeps(path: string, directory: boolean): boolean {
    if (!this.tracked.holds(path, directory)) return false
    if (directory) {
      this.entered.add(`${path}/`)
      this.lastDir = undefined
    }
    return true
  }
}

/** The marks table's size: 4 KiB for each set of rules (one per directory with a .gitignore), not 64. */
const TAIL_MARKS = 0x1000
/** A name's tail as an index of the marks table: the low bits of its last character, or of its last two (shared: a closer look). */
const tailOf = (text: string, length: number): number => length === 1
  ? text.charCodeAt(text.length - 1) & 0xfff
  : ((text.charCodeAt(text.length - 2) & 0x3f) << 6) | (text.charCodeAt(text.length - 1) & 0x3f)

function endsWithAny(name: string, endings: readonly string[]): boolean {
  for (const ending of endings) if (name.endsWith(ending)) return true
  return false
}

/** A .gitignore's rules: its lines but blank ones and comments. */
const rulesOf = (text: string): string[] => text.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.startsWith('#'))

/** One .gitignore; `base`: its directory relative to the git root, '' or ending in '/'. */
function layerOf(base: string, text: string, lines: readonly string[]) {
  // Each rule's literal ending (`*.log` → `.log`, `src/build/` → `build`); '' (none, or escapes) turns the test off.
  const endings = lines.map((line) => {
    const rule = line.replace(/ +$/, '').replace(/^!/, '').replace(/\/+$/, '')
    return line.includes('\\') ? '' : /[^*?[\]/]*$/.exec(rule)?.[0] ?? ''
  })
  // No rule names a path (`*.log`, `build/`; not `/dist`): the name alone decides, as the walk never enters an ignored directory.
  const byName = lines.every((line) => !line.trim().replace(/\/+$/, '').includes('/'))
  // A large file (generated lists of paths) is mostly literal: those rules become lookups, never tested one by one.
  const runs = lines.length > FEW_RULES ? new RuleRuns(lines) : undefined
  return {
    base, text, rules: runs ?? ignore({ ignorecase: false }).add(text), byName,
    endings: endings.includes('') ? undefined : endings,
    /** Whether a name must end as some rule does before the rules are asked (a scan of every ending: small files only). */
    scanEndings: runs === undefined,
    count: lines.length,
    tested: runs?.patterns ?? lines.length,
  }
}

/** Rules as text, deepest .gitignore first (GitIgnore.describe). */
export interface RulesText {
  layers: { base: string, text: string }[]
  entered: string[]
}
