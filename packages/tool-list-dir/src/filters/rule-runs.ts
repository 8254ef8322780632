// A large .gitignore matched by lookups: literal names, literal paths and `*<ending>` rules in maps, the rest in order.
import ignore, { type Ignore } from 'ignore'

/** A matcher's answer for one path, as the `ignore` package gives it. */
export interface RuleTest {
  ignored: boolean
  unignored: boolean
}

/** The last rule of a kind matching one key: its position in the file, whether it negates, whether it needs a directory. */
interface Last {
  index: number
  negative: boolean
}

/** Rules whose match is one lookup: by the name, the path below the file's directory, or the name's ending. */
class Lookups {
  readonly names = new Map<string, [Last?, Last?]>()
  readonly paths = new Map<string, [Last?, Last?]>()
  readonly endings = new Map<string, [Last?, Last?]>()
  /** The lengths of the endings present, longest first: a name is looked up once per length. */
  lengths: number[] = []

  add(map: Map<string, [Last?, Last?]>, key: string, last: Last, dirOnly: boolean): void {
    const slots = map.get(key) ?? []
    slots[dirOnly ? 1 : 0] = last // later rules have higher indexes: the last one added wins
    map.set(key, slots)
  }

  /** The last rule matching, of all kinds here. */
  find(path: string, name: string, directory: boolean): Last | undefined {
    let best = pick(this.names.get(name), directory, undefined)
    best = pick(this.paths.get(path), directory, best)
    for (const length of this.lengths) {
      if (length <= name.length) best = pick(this.endings.get(name.slice(name.length - length)), directory, best)
    }
    return best
  }
}

/** The later of `best` and the rules in `slots` that apply (a directory-only one to directories alone). */
function pick(slots: [Last?, Last?] | undefined, directory: boolean, best: Last | undefined): Last | undefined {
  if (slots === undefined) return best
  for (const last of directory ? slots : slots.slice(0, 1)) {
    if (last !== undefined && (best === undefined || last.index > best.index)) best = last
  }
  return best
}

/** How many tests one `ignore` run takes before it is built again: the package caches every path it was asked about. */
const CACHED_TESTS = 1000

/** Consecutive rules that need a glob matcher, kept in file order in the `ignore` package. */
class Patterns {
  private matcher: Ignore | undefined
  private tests = 0
  constructor(readonly text: string) {}

  test(path: string): RuleTest {
    if (this.matcher === undefined || ++this.tests > CACHED_TESTS) {
      this.matcher = ignore({ ignorecase: false }).add(this.text)
      this.tests = 0
    }
    const { ignored, unignored } = this.matcher.test(path)
    return { ignored, unignored }
  }
}

/**
 * A .gitignore's rules as runs in file order: lookups, then patterns, then lookups… The last rule that matches decides
 * (git's rule), so runs are asked from the last: the first run with a match answers. A path costs a few map lookups per
 * lookup run and a scan of the patterns only, never a test of every rule.
 */
export class RuleRuns {
  private readonly runs: (Lookups | Patterns)[] = []
  /** Rules that need a glob matcher (the costly kind). */
  patterns = 0

  constructor(lines: readonly string[]) {
    let lookups: Lookups | undefined
    let pending: string[] = []
    const flush = () => {
      if (pending.length > 0) this.runs.push(new Patterns(pending.join('\n')))
      pending = []
    }
    for (const [index, line] of lines.entries()) {
      const rule = lookupOf(line)
      if (rule === undefined) {
        pending.push(line)
        this.patterns++
        lookups = undefined
        continue
      }
      flush()
      if (lookups === undefined) this.runs.push(lookups = new Lookups())
      const last = { index, negative: rule.negative }
      if (rule.kind === 'ending') {
        lookups.add(lookups.endings, rule.key, last, rule.dirOnly)
        if (!lookups.lengths.includes(rule.key.length)) lookups.lengths = [...lookups.lengths, rule.key.length].toSorted((a, b) => b - a)
      } else {
        lookups.add(rule.kind === 'name' ? lookups.names : lookups.paths, rule.key, last, rule.dirOnly)
      }
    }
    flush()
  }

  /** `path`: below the .gitignore's directory, with a trailing '/' for a directory (as the `ignore` package takes it). */
  test(path: string): RuleTest {
    const directory = path.endsWith('/')
    const bare = directory ? path.slice(0, -1) : path
    const name = bare.slice(bare.lastIndexOf('/') + 1)
    for (let at = this.runs.length - 1; at >= 0; at--) {
      const run = this.runs[at] as Lookups | Patterns
      if (run instanceof Patterns) {
        const result = run.test(path)
        if (result.ignored || result.unignored) return result
        continue
      }
      const last = run.find(bare, name, directory)
      if (last !== undefined) return { ignored: !last.negative, unignored: last.negative }
    }
    return { ignored: false, unignored: false }
  }
}

/**
 * A rule one lookup decides, or undefined: a literal name (`.DS_Store`, `build/`), a literal path (`/dist`, `a/b/`) or
 * `*<literal>` (`*.log`). Escapes, wildcards elsewhere, `**` and doubled slashes go to the glob matcher.
 */
function lookupOf(line: string): { kind: 'name' | 'path' | 'ending', key: string, negative: boolean, dirOnly: boolean } | undefined {
  if (line.includes('\\')) return undefined
  const negative = line.startsWith('!')
  let body = (negative ? line.slice(1) : line).replace(/ +$/, '')
  const dirOnly = body.endsWith('/')
  if (dirOnly) body = body.slice(0, -1)
  if (body === '' || body.endsWith('/') || body.includes('//')) return undefined
  if (/^\*[^*?[/]+$/.test(body)) return { kind: 'ending', key: body.slice(1), negative, dirOnly }
  if (/[*?[]/.test(body)) return undefined
  if (!body.includes('/')) return { kind: 'name', key: body, negative, dirOnly }
  // A slash anywhere but at the end anchors the rule to the .gitignore's directory.
  const key = body.startsWith('/') ? body.slice(1) : body
  return key === '' || key.startsWith('/') ? undefined : { kind: 'path', key, negative, dirOnly }
}
