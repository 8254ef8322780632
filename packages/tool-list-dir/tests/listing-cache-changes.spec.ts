import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Host } from '@gencode-ai/testkit'
import type { ListArgs } from '../src/args.ts'
import { ListingCache } from '../src/walk/listing-cache.ts'
import { listCached, listDirHost, listThrough, makeTree } from './harness.ts'

// Changes a directory's own times may hide, each followed by listings of several shapes through one cache: every one
// must equal a listing read from disk. The walks count what was just made as settled (harness listCached), so a change
// waits out the clock's tick (a few ms) after the walk that read what it changes.
let host: Host
beforeEach(async () => {
  host = await listDirHost({}, { sandbox: 'workspace-write' })
})
afterEach(async () => { await host.dispose() })

/** Shapes sharing one cache: windows that fill at once, later, or not at all; filters; another listed directory. */
const SHAPES: ListArgs[] = [
  { path: '.', recursive: true, depth: 4, limit: 2 },
  { path: '.', recursive: true, depth: 4, limit: 2, all: true },
  { path: '.', recursive: true, depth: 2, limit: 1 },
  { path: '.', recursive: true, depth: 4, limit: 2, offset: 3 },
  { path: '.', recursive: true, depth: 4, limit: 2, sort: 'size' },
  { path: '.', recursive: true, depth: 4, limit: 2, long: true },
  { path: '.', recursive: true, depth: 4, limit: 2, ignore: ['f1*'] },
  { path: 'c', recursive: true, depth: 4, limit: 1 },
]

const git = (...args: string[]): void => { execFileSync('git', ['-C', host.cwd, ...args]) }
/** Mounts where this process may make them (root with CAP_SYS_ADMIN), on a fresh tmpfs to try first. */
const canMount = spawnSync('mount', ['-t', 'tmpfs', 'none', '/nonexistent-dir']).stderr.toString().includes('does not exist')

describe('the listing cache against changes its directory times may hide', () => {
  it('every listing equals a disk read after each change', async () => {
    const at = (rel: string): string => join(host.cwd, rel)
    const tree: Record<string, string> = { 'top.ts': 't', 'node_modules/m/x.js': 'x', '.gitignore': '*.log\n', 'c/d4/t.log': 'l' }
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) tree[`c/d${i}/f${j}.ts`] = 'c'
    for (let i = 0; i < 5; i++) tree[`c/f${i}.ts`] = 'c'
    for (let i = 0; i < 5; i++) tree[`e/g/f${i}.ts`] = 'e'
    await makeTree(host.cwd, tree)
    git('init', '-q')
    git('add', '-f', 'c/d4/t.log')
    const cache = new ListingCache(200_000)
    const mounted: string[] = []
    const check = async (what: string): Promise<void> => {
      for (const args of SHAPES) {
        const disk = await listThrough(host, args, 'local')
        for (let run = 0; run < 2; run++) expect(await listCached(host, args, cache), `${what}: ${JSON.stringify(args)}`).toEqual(disk)
      }
      await sleep(30)
    }
    const steps: [string, () => void][] = [
      ['kept and taken back', () => undefined],
      ['a kept directory renamed away and back (its ctime moves)', () => {
        renameSync(at('c/d1'), at('away'))
        renameSync(at('away'), at('c/d1'))
      }],
      ['its parent renamed away and back', () => {
        renameSync(at('c'), at('away'))
        renameSync(at('away'), at('c'))
      }],
      // ext4 and tmpfs give the freed inode number to the next directory made.
      ['a kept directory removed and made again, likely with the same inode number', () => {
        rmSync(at('c/d2'), { recursive: true })
        mkdirSync(at('c/d2'))
        writeFileSync(at('c/d2/f0.ts'), 'z')
      }],
      // To the nanosecond (touch -r): a Date's milliseconds would leave mtime moved all the same.
      ['a file added, then the directory\'s mtime set back (its ctime still moves)', () => {
        execFileSync('touch', ['-r', at('c/d3'), at('mtime-of-d3')])
        writeFileSync(at('c/d3/new.ts'), 'n')
        execFileSync('touch', ['-m', '-r', at('mtime-of-d3'), at('c/d3')])
        expect(statSync(at('c/d3')).mtimeMs).toBe(statSync(at('mtime-of-d3')).mtimeMs)
      }],
      ['a FIFO in place of a file', () => {
        rmSync(at('c/d0/f0.ts'))
        execFileSync('mkfifo', [at('c/d0/f0.ts')])
      }],
      ['a .gitignore added in a kept directory', () => { writeFileSync(at('c/d0/.gitignore'), 'f1.ts\n') }],
      ['rules changed in an ancestor\'s .gitignore', () => { writeFileSync(at('.gitignore'), '*.log\nf2.ts\nd1/\n') }],
      ['a tracked file taken out of the index', () => { git('rm', '-q', '--cached', 'c/d4/t.log') }],
      ['and tracked again', () => { git('add', '-f', 'c/d4/t.log') }],
    ]
    if (canMount) {
      steps.push(
        ['a kept directory made a mount point', () => { execFileSync('mount', ['-t', 'tmpfs', 'none', at('e/g')]); mounted.push(at('e/g')) }],
        ['and unmounted', () => { execFileSync('umount', [mounted.pop() as string]) }],
        ['another directory bound over a kept one', () => { execFileSync('mount', ['--bind', at('c/d3'), at('e/g')]); mounted.push(at('e/g')) }],
        ['and unbound', () => { execFileSync('umount', [mounted.pop() as string]) }],
      )
    }
    try {
      for (const [what, change] of steps) {
        change()
        await check(what)
      }
    } finally {
      for (const path of mounted) execFileSync('umount', [path])
    }
    expect(cache.hits).toBeGreaterThan(0)
  }, 120_000)
})
