// Glob matching in time linear in the name: `ignore` by a greedy two-pointer scan, `pattern` by an automaton (no backtracking regex).

/**
 * `ignore`'s meaning: only `*` (any run) and `?` (one character) are wildcards. The parts between stars have fixed
 * lengths, so the first must start the name, the last end it, and each middle one is placed leftmost (bit-parallel, one
 * pass): time linear in the name, whatever the glob.
 */
export function wildcardMatcher(glob: readonly string[]): (name: readonly string[] | string) => boolean {
  const first = glob.indexOf('*')
  if (first === -1) return (name) => glob.length === name.length && fits(glob, 0, name, 0, glob.length)
  const last = glob.lastIndexOf('*')
  const tail = glob.length - last - 1
  const middle: Segment[] = []
  for (let at = first + 1; at < last; at = glob.indexOf('*', at) + 1) {
    if (glob[at] !== '*') middle.push(new Segment(glob.slice(at, glob.indexOf('*', at))))
  }
  const fixed = first + tail + middle.reduce((sum, segment) => sum + segment.length, 0)
  return (name) => {
    const end = name.length - tail
    if (fixed > name.length || !fits(glob, 0, name, 0, first) || !fits(glob, last + 1, name, end, tail)) return false
    let from = first
    for (const segment of middle) {
      from = segment.find(name, from, end)
      if (from === -1) return false
    }
    return true
  }
}

export const wildcardMatch = (glob: readonly string[], name: readonly string[] | string): boolean => wildcardMatcher(glob)(name)

/** Whether `length` characters of `glob` from `at` match `name` from `from` (`?` matches any one). */
function fits(glob: readonly string[], at: number, name: readonly string[] | string, from: number, length: number): boolean {
  for (let index = 0; index < length; index++) {
    const want = glob[at + index]
    if (want !== '?' && want !== name[from + index]) return false
  }
  return true
}

/** A star-free part of a wildcard glob, found by shift-and: one bit per character of it, 32 to a word. */
class Segment {
  readonly length: number
  /** Per character, the positions it may take; ASCII by index (a lookup per character of a name is the hot path). */
  private readonly ascii: (Uint32Array | undefined)[] = Array.from({ length: 128 }, () => undefined)
  private readonly masks = new Map<string, Uint32Array>()
  /** The `?` positions: they accept any character. */
  private readonly any: Uint32Array
  private readonly state: Uint32Array

  constructor(chars: readonly string[]) {
    this.length = chars.length
    const words = Math.ceil(chars.length / 32)
    this.any = new Uint32Array(words)
    this.state = new Uint32Array(words)
    for (const [index, char] of chars.entries()) {
      let mask = char === '?' ? this.any : this.masks.get(char)
      if (mask === undefined) this.masks.set(char, mask = new Uint32Array(words))
      mask[index >>> 5] = ((mask[index >>> 5] ?? 0) | (1 << (index & 31))) >>> 0
    }
    for (const [char, mask] of this.masks) {
      for (let word = 0; word < words; word++) mask[word] = ((mask[word] as number) | (this.any[word] as number)) >>> 0
      if (char.length === 1 && char.charCodeAt(0) < 128) this.ascii[char.charCodeAt(0)] = mask
    }
  }

  /** Where the leftmost occurrence at or after `from`, ending by `end`, ends; -1 when there is none. */
  find(name: readonly string[] | string, from: number, end: number): number {
    const { state, any } = this
    state.fill(0)
    const top = this.length - 1
    const topWord = top >>> 5
    const topBit = top & 31
    for (let pos = from; pos < end; pos++) {
      const char = name[pos] as string
      const code = char.charCodeAt(0)
      const mask = (char.length === 1 && code < 128 ? this.ascii[code] : this.masks.get(char)) ?? any
      let carry = 1
      for (let word = 0; word <= topWord; word++) {
        const value = state[word] as number
        state[word] = ((value << 1) | carry) & (mask[word] as number)
        carry = value >>> 31
      }
      if ((((state[topWord] as number) >>> topBit) & 1) === 1) return pos + 1
    }
    return -1
  }
}

/** One automaton state: consumes a character that passes `test` and moves to `out`, or moves on to each of `eps` for free. */
interface State {
  test?: (code: number) => boolean
  out: number
  eps?: number[]
}

type Node =
  | { kind: 'char', test: (code: number) => boolean }
  | { kind: 'seq', items: Node[] }
  | { kind: 'alt', options: Node[] }
  | { kind: 'repeat', body: Node, min: 0 | 1, max: number } // 1 or Infinity

export class GlobSyntaxError extends Error {}

const SLASH = 0x2f
const notSlash = (code: number): boolean => code !== SLASH
const anyChar = (): boolean => true
const literal = (char: number): Node => ({ kind: 'char', test: (code) => code === char })
const seq = (...items: Node[]): Node => ({ kind: 'seq', items })
const many = (body: Node): Node => ({ kind: 'repeat', body, min: 0, max: Infinity })
const STAR = many({ kind: 'char', test: notSlash })
/** `**` as a whole segment before `/`: any number of whole segments, each with its `/`. */
const SEGMENTS = many(seq(STAR, literal(SLASH)))

const POSIX: Record<string, (code: number) => boolean> = {
  alpha: (c) => /\p{L}/u.test(String.fromCodePoint(c)),
  digit: (c) => c >= 0x30 && c <= 0x39,
  alnum: (c) => /[\p{L}\p{N}]/u.test(String.fromCodePoint(c)),
  upper: (c) => c >= 0x41 && c <= 0x5a,
  lower: (c) => c >= 0x61 && c <= 0x7a,
  space: (c) => /\s/u.test(String.fromCodePoint(c)),
  xdigit: (c) => /[0-9a-fA-F]/.test(String.fromCodePoint(c)),
  word: (c) => /\w/.test(String.fromCodePoint(c)),
  punct: (c) => /[!-/:-@[-`{-~]/.test(String.fromCodePoint(c)),
}

// A picomatch-style glob (`*`, `?`, `**` segments, `[…]`, `{a,b}`, `{1..5}`, `@(…)`, `?(…)`, `*(…)`, `+(…)`, a leading `!`) as a matcher.
export function compileGlob(glob: string): (path: string) => boolean {
  const negate = glob.startsWith('!') && !glob.startsWith('!(')
  // Paths are relative to the listed directory: a leading `./` names it, as in picomatch.
  // Consecutive `**` segments are one.
  const body = (negate ? glob.slice(1) : glob).replace(/^(?:\.\/)+/, '').replace(/(^|\/)\*\*(?:\/\*\*)+(?=\/|$)/g, '$1**')
  const chars = Array.from(body, (char) => char.codePointAt(0) as number)
  const parser = new Parser(chars)
  const tree = parser.sequence('')
  if (parser.at < chars.length) throw new GlobSyntaxError(`unbalanced ${String.fromCodePoint(chars[parser.at] as number)}`)
  const automaton = new Automaton(tree)
  return negate ? (path) => !automaton.matches(path) : (path) => automaton.matches(path)
}

class Parser {
  at = 0
  constructor(private readonly chars: readonly number[]) {}

  private peek(offset = 0): string {
    const code = this.chars[this.at + offset]
    return code === undefined ? '' : String.fromCodePoint(code)
  }

  /** Items up to one of `stops` (not consumed) or the end. */
  sequence(stops: string): Node {
    const items: Node[] = []
    while (this.at < this.chars.length && !stops.includes(this.peek())) items.push(this.item(items))
    return seq(...items)
  }

  private item(before: Node[]): Node {
    const char = this.peek()
    const next = this.peek(1)
    if ('@?*+'.includes(char) && next === '(') {
      this.at += 2
      const body = this.group()
      if (char === '@') return body
      return { kind: 'repeat', body, min: char === '+' ? 1 : 0, max: char === '?' ? 1 : Infinity }
    }
    if (char === '!' && next === '(') throw new GlobSyntaxError('negated groups !(…) are not supported')
    this.at++
    switch (char) {
      case '\\': {
        const escaped = this.chars[this.at]
        if (escaped === undefined) return literal(0x5c)
        this.at++
        return literal(escaped)
      }
      case '?':
        return { kind: 'char', test: notSlash }
      case '*':
        return this.star(before)
      case '[':
        return this.bracket() ?? literal(0x5b)
      case '{':
        return this.brace()
      case '(':
        return this.group()
      default:
        return literal(char.codePointAt(0) as number)
    }
  }

  // `*`, or `**` as a whole segment: before a slash any leading segments, after a final slash optional then anything, alone anything.
  private star(before: Node[]): Node {
    if (this.peek() !== '*') return STAR
    while (this.peek() === '*') this.at++
    const startsSegment = this.at - 2 === 0 || this.chars[this.at - 3] === SLASH
    if (!startsSegment) return STAR
    if (this.peek() === '/') {
      this.at++
      return SEGMENTS
    }
    if (this.at < this.chars.length) return STAR
    const last = before.at(-1)
    const starred = this.chars[this.at - 4] === 0x2a
    if (last !== undefined && this.at > 2 && !starred) {
      before.pop() // the `/` before `**`: `a/**` matches `a` too (as picomatch, unless the segment ends in `*`)
      return { kind: 'repeat', body: seq(last, many({ kind: 'char', test: anyChar })), min: 0, max: 1 }
    }
    return many({ kind: 'char', test: anyChar })
  }

  /** `[abc]`, `[a-z]`, `[!x]` / `[^x]`, `[[:digit:]]`; never `/`. Undefined (a literal `[`) when unclosed. */
  private bracket(): Node | undefined {
    const start = this.at
    const negated = this.peek() === '!' || this.peek() === '^'
    if (negated) this.at++
    const tests: ((code: number) => boolean)[] = []
    let first = true
    while (this.at < this.chars.length && (first || this.peek() !== ']')) {
      first = false
      const posix = /^\[:([a-z]+):\]/.exec(String.fromCodePoint(...this.chars.slice(this.at, this.at + 10)))
      if (posix !== null && POSIX[posix[1] as string] !== undefined) {
        tests.push(POSIX[posix[1] as string] as (code: number) => boolean)
        this.at += posix[0].length
        continue
      }
      let low = this.chars[this.at++] as number
      if (low === 0x5c && this.at < this.chars.length) low = this.chars[this.at++] as number
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '') {
        this.at++
        const high = this.chars[this.at++] as number
        tests.push((code) => code >= low && code <= high)
      } else {
        tests.push((code) => code === low)
      }
    }
    if (this.peek() !== ']') {
      this.at = start
      return undefined
    }
    this.at++
    return { kind: 'char', test: (code) => code !== SLASH && tests.some((test) => test(code)) !== negated }
  }

  /** `{a,b,…}` (nested), `{1..10}`, `{a..e}`; `{x}` without a comma is literal. */
  private brace(): Node {
    const rest = String.fromCodePoint(...this.chars.slice(this.at, this.at + 40))
    const range = /^(-?\d+)\.\.(-?\d+)\}/.exec(rest) ?? /^([a-zA-Z])\.\.([a-zA-Z])\}/.exec(rest)
    if (range !== null) {
      this.at += Array.from(range[0]).length
      return rangeNode(range[1] as string, range[2] as string)
    }
    const start = this.at
    const options = this.alternatives(',', '}', 'unbalanced brace')
    if (options.length > 1) return { kind: 'alt', options }
    return seq(literal(0x7b), ...Array.from(this.chars.slice(start, this.at - 1), literal), literal(0x7d))
  }

  /** The inside of `(…)` after the `(`: alternatives separated by `|`. */
  private group(): Node {
    return { kind: 'alt', options: this.alternatives('|', ')', 'unbalanced parenthesis') }
  }

  /** Sequences separated by `separator` up to and past `close`; `unclosed` is the error when `close` never comes. */
  private alternatives(separator: string, close: string, unclosed: string): Node[] {
    const options = [this.sequence(separator + close)]
    while (this.peek() === separator) {
      this.at++
      options.push(this.sequence(separator + close))
    }
    if (this.peek() !== close) throw new GlobSyntaxError(unclosed)
    this.at++
    return options
  }
}

const MAX_RANGE = 10_000

function rangeNode(from: string, to: string): Node {
  const numeric = /\d/.test(from)
  const [low, high] = numeric ? [Number(from), Number(to)] : [from.charCodeAt(0), to.charCodeAt(0)]
  const [min, max] = low <= high ? [low, high] : [high, low]
  if (max - min > MAX_RANGE) throw new GlobSyntaxError(`range {${from}..${to}} has more than ${MAX_RANGE} values`)
  if (!numeric) return { kind: 'char', test: (code) => code >= min && code <= max }
  if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max)) throw new GlobSyntaxError(`range {${from}..${to}} goes past ${Number.MAX_SAFE_INTEGER}`)
  // The decimal text of every integer from min to max (no padding), as digit classes: a few states per digit, not a branch per value.
  const options: Node[] = []
  if (min < 0) options.push(seq(literal(0x2d), unsignedRange(max < 0 ? -max : 1, -min)))
  if (max >= 0) options.push(unsignedRange(Math.max(min, 0), max))
  return { kind: 'alt', options }
}

const digits = (low: number, high: number): Node => ({ kind: 'char', test: (code) => code >= low && code <= high })
const NINE = 0x39
const ZERO = 0x30

/** Non-negative integers from `low` to `high` as text: one branch per number of digits. */
function unsignedRange(low: number, high: number): Node {
  const options: Node[] = []
  for (let length = String(low).length; length <= String(high).length; length++) {
    const first = Math.max(low, length === 1 ? 0 : 10 ** (length - 1))
    options.push(sameLength(String(first), String(Math.min(high, 10 ** length - 1))))
  }
  return { kind: 'alt', options }
}

/** Digit strings from `a` to `b`, both of one length: the shared first digit, or first/middle/last first digits with the rest ranged. */
function sameLength(a: string, b: string): Node {
  if (a === '') return seq()
  const [first, last] = [a.charCodeAt(0), b.charCodeAt(0)]
  if (first === last) return seq(literal(first), sameLength(a.slice(1), b.slice(1)))
  const rest = a.length - 1
  const options: Node[] = []
  let [low, high] = [first, last]
  // A first digit whose tail is not the full 0…0 to 9…9 span gets a branch of its own.
  if (/[^0]/.test(a.slice(1))) {
    options.push(seq(literal(first), sameLength(a.slice(1), '9'.repeat(rest))))
    low++
  }
  if (/[^9]/.test(b.slice(1))) {
    options.push(seq(literal(last), sameLength('0'.repeat(rest), b.slice(1))))
    high--
  }
  if (low <= high) options.push(seq(digits(low, high), ...Array.from({ length: rest }, () => digits(ZERO, NINE))))
  return { kind: 'alt', options }
}

/** The glob as a nondeterministic automaton, run over all live states at once: O(path × states), whatever the glob. */
class Automaton {
  private readonly states: State[] = [{ out: -1 }] // state 0 accepts
  private readonly start: number
  private readonly seen: Uint32Array
  private generation = 0

  constructor(tree: Node) {
    this.start = this.build(tree, 0)
    this.seen = new Uint32Array(this.states.length)
  }

  /** States that match `node` and then continue at `next`; returns the entry state. */
  private build(node: Node, next: number): number {
    switch (node.kind) {
      case 'char':
        return this.states.push({ test: node.test, out: next }) - 1
      case 'seq':
        return node.items.reduceRight((after, item) => this.build(item, after), next)
      case 'alt':
        return this.states.push({ out: -1, eps: node.options.map((option) => this.build(option, next)) }) - 1
      case 'repeat': {
        if (node.max === 1) return this.states.push({ out: -1, eps: [this.build(node.body, next), next] }) - 1
        const loop = this.states.push({ out: -1, eps: [] }) - 1
        const body = this.build(node.body, loop)
        ;(this.states[loop] as State).eps = [body, next]
        return node.min === 1 ? body : loop
      }
    }
  }

  /** Add `state` and what it reaches for free to `into` (each state once per step). */
  private close(state: number, into: number[]): void {
    const stack = [state]
    while (stack.length > 0) {
      const at = stack.pop() as number
      if (this.seen[at] === this.generation) continue
      this.seen[at] = this.generation
      const { eps } = this.states[at] as State
      if (eps === undefined) into.push(at)
      else for (let index = eps.length - 1; index >= 0; index--) stack.push(eps[index] as number)
    }
  }

  matches(path: string): boolean {
    let live: number[] = []
    this.generation++
    this.close(this.start, live)
    for (let index = 0; index < path.length && live.length > 0; index++) {
      let code = path.charCodeAt(index)
      if (code >= 0xd800 && code <= 0xdbff && index + 1 < path.length) {
        const low = path.charCodeAt(index + 1)
        if (low >= 0xdc00 && low <= 0xdfff) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00)
          index++
        }
      }
      const next: number[] = []
      this.generation++
      for (const at of live) {
        const state = this.states[at] as State
        if (state.test?.(code) === true) this.close(state.out, next)
      }
      live = next
    }
    return live.includes(0)
  }
}
