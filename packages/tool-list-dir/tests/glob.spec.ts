import fc from 'fast-check'
import picomatch from 'picomatch'
import { describe, expect, it } from 'vitest'
import { compileGlob, GlobSyntaxError, wildcardMatch } from '../src/filters/glob.ts'

// Globs as segments joined by `/`, `**` a whole segment; extglobs are checked by example below, since picomatch reads a
// `?` or `**` right after a group as a regex quantifier or a globstar (its quirks, not glob meaning).
const tokens = ['a', 'b', '.', '*', '?', '[ab]', '[^a]', '{a,b}', '{a,b/c}', '2']
const globSegment = fc.oneof(fc.constant('**'), fc.array(fc.constantFrom(...tokens), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('')).filter((segment) => !segment.includes('**')))
const segments = ['a', 'b', 'ab', 'ba', '.a', 'bb', 'aab', '2', 'c']

describe('compileGlob', () => {
  it('agrees with picomatch (dot: true) on generated globs and paths', () => {
    fc.assert(fc.property(
      fc.array(globSegment, { minLength: 1, maxLength: 4 }),
      fc.array(fc.constantFrom(...segments), { minLength: 1, maxLength: 4 }),
      (parts, names) => {
        const glob = parts.join('/')
        const path = names.join('/')
        let expected
        try {
          expected = picomatch.makeRe(glob, { dot: true })
        } catch {
          return
        }
        if (expected.source === '$^') return
        expect({ glob, path, matches: compileGlob(glob)(path) }).toEqual({ glob, path, matches: expected.test(path) })
      },
    ), { numRuns: Number(process.env.GLOB_RUNS ?? 3000) })
  })

  it('matches the common forms', () => {
    expect(compileGlob('*.ts')('index.ts')).toBe(true)
    expect(compileGlob('src/**')('src')).toBe(true)
    expect(compileGlob('tools/**/*.ts')('tools/a/b/c.ts')).toBe(true)
    expect(compileGlob('tools/**/*.ts')('tools/c.ts')).toBe(true)
    expect(compileGlob('*.{ts,js}')('a.js')).toBe(true)
    expect(compileGlob('!*.ts')('a.js')).toBe(true)
    expect(compileGlob('[[:digit:]]*')('1x')).toBe(true)
    expect(compileGlob('*.ts')('a/b.ts')).toBe(false)
    expect(compileGlob('+(a|b)c')('abxc')).toBe(false)
    expect(compileGlob('+(a|b)c')('abbc')).toBe(true)
    expect(compileGlob('@(x|yy).ts')('yy.ts')).toBe(true)
    expect(compileGlob('?(x).ts')('.ts')).toBe(true)
    expect(compileGlob('*(ab)')('ababab')).toBe(true)
    expect(compileGlob('[!a]b')('cb')).toBe(true)
    expect(compileGlob('[!a]b')('ab')).toBe(false)
    // Ranges by example: picomatch reads `.{1..3}` as a regex quantifier.
    expect(compileGlob('v{1..12}.md')('v10.md')).toBe(true)
    expect(compileGlob('v{1..12}.md')('v13.md')).toBe(false)
    expect(compileGlob('{a..c}x')('bx')).toBe(true)
  })

  it('refuses what it cannot match', () => {
    expect(() => compileGlob('src/{a,b')).toThrow(GlobSyntaxError)
    expect(() => compileGlob('@(a|b')).toThrow(GlobSyntaxError)
    expect(() => compileGlob('!(a)')).toThrow(GlobSyntaxError)
  })

  it('takes linear time on a glob that makes a backtracking regex run for minutes', () => {
    const glob = `${'*a'.repeat(12)}*b`
    const path = 'a'.repeat(4000)
    expect(compileGlob(glob)(path)).toBe(false)
    expect(compileGlob(`${'+(a|aa)'.repeat(30)}b`)('a'.repeat(4000))).toBe(false)
  })
})

describe('wildcardMatch', () => {
  const regexOf = (glob: string) => new RegExp(`^${Array.from(glob, (c) => c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')).join('')}$`, 'su')
  it('agrees with the regex it replaces', () => {
    fc.assert(fc.property(fc.stringMatching(/^[ab*?.[]{0,8}$/), fc.stringMatching(/^[ab.[]{0,10}$/), (glob, name) => {
      expect(wildcardMatch(Array.from(glob), name)).toBe(regexOf(glob).test(name))
    }), { numRuns: 3000 })
  })

  it('takes linear time on the pathological glob', () => {
    expect(wildcardMatch(Array.from(`${'*a'.repeat(500)}*b`), 'a'.repeat(255))).toBe(false)
  })
})

describe('bounded work', () => {
  it('numeric ranges: exactly the unpadded integers between, as a small automaton', () => {
    fc.assert(fc.property(fc.integer({ min: -20_000, max: 1_000_000 }), fc.integer({ min: 0, max: 9_999 }), (from, span) => {
      const matches = compileGlob(`x{${from}..${from + span}}y`)
      const probes = [from - 1, from, from + 1, from + (span >> 1), from + span - 1, from + span, from + span + 1]
      probes.push(0, 10 ** String(from).length)
      for (const value of probes) expect({ value, matches: matches(`x${value}y`) }).toEqual({ value, matches: value >= from && value <= from + span })
      expect(matches(`x0${from}y`) && from !== 0 && !String(from).startsWith('-')).toBe(false)
      expect(matches(`x+${Math.abs(from)}y`)).toBe(false)
    }), { numRuns: 2000 })
    // Every value of a range with both signs, and around it.
    const matches = compileGlob('{-120..1005}')
    for (let value = -1100; value <= 1100; value++) expect(matches(String(value))).toBe(value >= -120 && value <= 1005)
    expect(matches('-0')).toBe(false)
    expect(matches('007')).toBe(false)
  })

  it('two 1..9999 ranges over 5,000 names: the automaton stays small', () => {
    const matches = compileGlob('*{1..9999}*{1..9999}*')
    const names = Array.from({ length: 5000 }, (_, index) => `file-${index}-${index * 7}.txt`)
    expect(names.filter((name) => matches(name))).toHaveLength(4999) // file-0-0.txt holds no number from 1
  })

  it('a range past the safe integers is refused', () => {
    expect(() => compileGlob('{9007199254740993..9007199254740999}')).toThrow(/^range \{9007199254740993\.\.9007199254740999\} goes past 9007199254740991$/)
  })

  it('wildcards with parts longer than one shift-and word agree with the regex', () => {
    const regexOf = (glob: string) => new RegExp(`^${Array.from(glob, (c) => c === '*' ? '.*' : c === '?' ? '.' : c).join('')}$`, 'su')
    fc.assert(fc.property(fc.stringMatching(/^[ab*?]{0,90}$/), fc.stringMatching(/^[ab]{0,120}$/), (glob, name) => {
      expect(wildcardMatch(Array.from(glob), name)).toBe(regexOf(glob).test(name))
    }), { numRuns: 3000 })
    const long = `*${'a'.repeat(70)}b*`
    expect(wildcardMatch(Array.from(long), `${'a'.repeat(100)}b`)).toBe(true)
    expect(wildcardMatch(Array.from(long), `${'a'.repeat(69)}b${'a'.repeat(100)}`)).toBe(false)
    expect(wildcardMatch(Array.from('*é?😀*'), Array.from('xxé1😀'))).toBe(true)
  })
})
