/**
 * The git index reader bounds what it decodes and never blocks: a version-4 index whose prefix compression repeats a
 * long path, a sparse index looked up by ancestors, and a FIFO at `.git/index` (which `git ls-files` would block on).
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { parseIndex, trackedPaths } from '../src/filters/git-index.ts'
import { mkfifo } from './fifo.ts'

/** An index of `entries` ([mode, path or v4 suffix, v4 bytes dropped]), SHA-1 layout, a zero checksum (the reader does not check it). */
function index(version: number, entries: readonly [number, string, number?][]): Buffer {
  const header = Buffer.alloc(12)
  header.write('DIRC')
  header.writeUInt32BE(version, 4)
  header.writeUInt32BE(entries.length, 8)
  let previous = ''
  const parts = entries.map(([mode, path, drop]) => {
    const name = Buffer.from(path)
    // Version 4 keeps the previous path less `drop` bytes, then this suffix: the flags carry the whole length.
    previous = `${previous.slice(0, previous.length - (drop ?? 0))}${path}`
    const fixed = Buffer.alloc(62)
    fixed.writeUInt32BE(mode, 24)
    fixed.writeUInt16BE(Math.min(version === 4 ? previous.length : name.length, 0xfff), 60)
    if (version === 4) return Buffer.concat([fixed, Buffer.from([drop ?? 0]), name, Buffer.from([0])])
    const entry = Buffer.alloc((62 + name.length + 8) & ~7)
    fixed.copy(entry)
    name.copy(entry, 62)
    return entry
  })
  return Buffer.concat([header, ...parts, Buffer.alloc(20)])
}

const signal = () => new AbortController().signal
let root: string
beforeEach(async () => {
  root = await makeTmpDir('index-bounds-')
  execFileSync('git', ['init', '-q'], { cwd: root })
})
afterEach(async () => { await removeTmpDir(root) })

describe('the git index reader', () => {
  it('a version-4 path past 4,096 bytes is refused, and git is not asked: tracked files are unknown', async () => {
    const long = 'a'.repeat(5000)
    const bytes = index(4, [[0o100644, long], [0o100644, 'b', 1]])
    expect(() => parseIndex(bytes)).toThrow(/a path of 5000 bytes/u)
    writeFileSync(join(root, '.git/index'), bytes)
    expect((await trackedPaths(root, signal())).source).toBe('unknown')
    // One of 4,000 bytes is a path like any other.
    expect(parseIndex(index(4, [[0o100644, 'a'.repeat(4000)], [0o100644, 'b', 1]])).paths).toEqual(['a'.repeat(4000), `${'a'.repeat(3999)}b`])
  })

  it('sparse directories hold what lies under them, looked up by ancestor', async () => {
    const sparse = Array.from({ length: 1000 }, (_, at) => [0o040000, `deep/s${at}/`] as [number, string])
    writeFileSync(join(root, '.git/index'), index(2, [[0o100644, 'a.txt'], ...sparse]))
    const tracked = await trackedPaths(root, signal())
    expect(tracked.source).toBe('index')
    expect(tracked.holds('deep/s999/x/y.log', false)).toBe(true)
    expect(tracked.holds('deep/s999', true)).toBe(true)
    expect(tracked.holds('deep/s1000/y.log', false)).toBe(false)
    expect(tracked.holds('deep', true)).toBe(true) // it holds tracked paths
    expect(tracked.holds('other/y.log', false)).toBe(false)
  })

  it('a FIFO at .git/index: unknown, and git (which would block on it for 20 s) is not run', async () => {
    await mkfifo(join(root, '.git/index'))
    const started = Date.now()
    expect((await trackedPaths(root, signal())).source).toBe('unknown')
    expect((await trackedPaths(root, signal())).source).toBe('unknown')
    // A hang bound, not a timing claim: a blocked git would take its 20 s timeout per call.
    expect(Date.now() - started).toBeLessThan(15_000)
  })
})
