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
