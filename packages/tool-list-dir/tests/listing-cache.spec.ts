import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync, type Dirent } from 'node:fs'
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execTool, type Host } from '@gencode-ai/testkit'
import type { ListArgs } from '../src/args.ts'
import type { Listing } from '../src/types.ts'
import { ListingCache, SETTLED_MS } from '../src/walk/listing-cache.ts'
import { listCached as cachedOn, listDirHost, listThrough, makeTree } from './harness.ts'

// A host keeps what its walks only counted and takes it back while the directory is the same inode, unchanged: every
// listing must equal one read from disk, whatever changed between them.
let host: Host
beforeEach(async () => {
  host = await listDirHost({}, { sandbox: 'workspace-write' })
})
afterEach(async () => { await host.dispose() })

/** A walk with `cache` (see harness.ts), on this spec's host. */
const listCached = (args: ListArgs, cache: ListingCache, since?: number): Promise<Listing> => cachedOn(host, args, cache, since)

async function makeFixture(cwd: string): Promise<void> {
  const tree: Record<string, string | null | { link: string }> = {
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.gitignore': '*.log\n',
    'a/.gitignore': 'x.*\n', 'a/x.ts': 'x', 'a/y.ts': 'y',
    'b/to-c': { link: '../c' }, 'b/z.ts': 'z',
    'e/f/g/1.ts': '1', 'e/f/g/2.log': '2', 'e/f/h.ts': 'h',
    'outside/o/deep.ts': 'd',
  }
  for (let i = 0; i < 20; i++) tree[`c/f${i}.ts`] = 'c'
  for (let i = 0; i < 30; i++) tree[`outside/o${i}.ts`] = 'o'
  await makeTree(cwd, tree)
  // A name that is not UTF-8: its directory is read again each time (the name is re-read as bytes).
  await mkdir(join(cwd, 'd'))
  await mkdir(Buffer.concat([Buffer.from(join(cwd, 'd', 'raw')), Buffer.from([0xff])]))
}

const ARGS: ListArgs = { path: '.', recursive: true, depth: 4, limit: 3 }

describe('the listing cache', () => {
  it('a re-listing takes unchanged counted directories from it, and equals a listing read from disk', async () => {
    await makeFixture(host.cwd)
    const cache = new ListingCache(200_000)
    const disk = await listThrough(host, ARGS, 'local')
    expect(disk.truncated).toBeDefined()
    // The host's first walk keeps nothing; the second keeps; the third takes back.
    expect(await listCached(ARGS, cache)).toEqual(disk)
    expect(cache.size).toBe(0)
    expect(await listCached(ARGS, cache)).toEqual(disk)
    expect(cache.size).toBeGreaterThan(0)
    expect(cache.hits).toBe(0)
    expect(await listCached(ARGS, cache)).toEqual(disk)
    expect(cache.hits).toBeGreaterThan(0)
    // Kept: plain counted directories. Not kept: one with a .gitignore, a link or a name that is not UTF-8 (each needs its
    // handle again), and the listed directory itself (read through its checked handle every time).
    const at = (rel: string) => join(host.cwd, rel)
    for (const rel of ['c', 'e/f', 'e/f/g', 'outside']) expect(cache.has(at(rel)), rel).toBe(true)
    for (const rel of ['a', 'b', 'd', '.']) expect(cache.has(at(rel)), rel).toBe(false)
  })

  it('what changed since is read again: an entry added or removed, a directory swapped for a link, one renamed over another', async () => {
    await makeFixture(host.cwd)
    const cache = new ListingCache(200_000)
    await listCached(ARGS, cache)
    await listCached(ARGS, cache)
    const steps: [string, () => Promise<void>][] = [
      ['a file added', () => writeFile(join(host.cwd, 'c', 'new.ts'), 'n')],
      ['a file removed', () => rm(join(host.cwd, 'e', 'f', 'g', '1.ts'))],
      // The same name, now a link to a larger directory: never entered, counted as a link.
      ['a directory swapped for a link', async () => {
        await rm(join(host.cwd, 'e', 'f'), { recursive: true })
        await symlink('../outside', join(host.cwd, 'e', 'f'))
      }],
      // Another inode under a kept name, with the same entry names.
      ['a directory renamed over another', async () => {
        await makeTree(host.cwd, { 'c2/f0.ts': 'c', 'c2/other.ts': 'o' })
        await rm(join(host.cwd, 'c'), { recursive: true })
        await rename(join(host.cwd, 'c2'), join(host.cwd, 'c'))
      }],
    ]
    for (const [what, change] of steps) {
      await change()
      const disk = await listThrough(host, ARGS, 'local')
      expect(await listCached(ARGS, cache), what).toEqual(disk)
      expect(await listCached(ARGS, cache), `${what}, again`).toEqual(disk)
    }
  })

  it('a directory changed within SETTLED_MS of the walk\'s start is not kept (its times may not show a change in the same tick)', async () => {
    await makeFixture(host.cwd)
    const cache = new ListingCache(200_000)
    const now = Date.now()
    await listCached(ARGS, cache, now)
    await listCached(ARGS, cache, now)
    expect(cache.size).toBe(0)
  })

  it.skipIf(!existsSync('/proc/self/fdinfo'))('a directory whose filesystem does not move its times with its entries (/proc) is read each time', async () => {
    // A shell that opens three more descriptors when told: its /proc fdinfo directory gains three entries, same times.
    const shell = spawn('sh', ['-c', 'read go; exec 3</dev/null 4</dev/null 5</dev/null; echo opened; read stop'], { stdio: ['pipe', 'pipe', 'inherit'] })
    try {
      const args: ListArgs = { path: `/proc/${shell.pid}`, recursive: true, depth: 2, limit: 1 }
      const cache = new ListingCache(200_000)
      for (let i = 0; i < 3; i++) await listCached(args, cache)
      shell.stdin.write('\n')
      await new Promise((resolve) => shell.stdout.once('data', resolve))
      const disk = await listThrough(host, args, 'local')
      expect(await listCached(args, cache)).toEqual(disk)
    } finally {
      shell.kill('SIGKILL')
    }
  })

  it('holds at most its limit, making room from what earlier walks used least recently, never from what this walk used', () => {
    const dirents = (count: number): Dirent[] => readdirSync('/', { withFileTypes: true }).slice(0, count)
    const identity = (ino: number) => ({ dev: 1, ino, mtimeMs: 0, ctimeMs: 0 })
    const since = Date.now()
    // Each directory weighs its entries and 4 more.
    const cache = new ListingCache(20)
    cache.keeping()
    cache.put('/a', identity(1), dirents(3), since)
    cache.put('/b', identity(2), dirents(3), since)
    expect(cache.size).toBe(14)
    // A walk larger than the cache: what it kept first stays, what does not fit is not kept.
    cache.put('/c', identity(3), dirents(3), since)
    expect([cache.has('/a'), cache.has('/b'), cache.has('/c')]).toEqual([true, true, false])
    // The next walk uses /b, then keeps /c: room is made from /a (used by an earlier walk only).
    cache.keeping()
    expect(cache.get('/b', () => identity(2))).toHaveLength(3)
    cache.put('/c', identity(3), dirents(3), since)
    expect([cache.has('/a'), cache.has('/b'), cache.has('/c')]).toEqual([false, true, true])
    expect(cache.size).toBe(14)
    // Larger than the whole cache: not kept, nothing dropped for it.
    cache.put('/d', identity(4), dirents(20), since)
    expect([cache.has('/b'), cache.has('/c'), cache.has('/d')]).toEqual([true, true, false])
    // Another inode, or the same one changed: dropped.
    expect(cache.get('/b', () => identity(9))).toBeUndefined()
    expect(cache.get('/c', () => ({ ...identity(3), mtimeMs: 1 }))).toBeUndefined()
    expect(cache.size).toBe(0)
    expect(cache.hits).toBe(1)
  })

  it('its limit bounds the heap it holds, whatever the names\' and paths\' lengths (about 100 bytes a unit of size)', () => {
    // A real GC, so that what is measured is what the cache holds.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const dir = mkdtempSync(join(tmpdir(), 'cache-heap-'))
    const limit = 100_000
    try {
      const shapes: [string, number, number, number][] = [
        // what, entries a directory, a name's length, a path's length
        ['short names', 50, 8, 40],
        ['names of 250 characters', 50, 250, 40],
        ['empty directories 10 levels of 240 characters down', 0, 0, 2_400],
      ]
      for (const [what, entries, nameLength, pathLength] of shapes) {
        const at = join(dir, String(nameLength))
        mkdirSync(at)
        for (let i = 0; i < entries; i++) writeFileSync(join(at, String(i).padStart(nameLength, 'n')), '')
        const cache = new ListingCache(limit)
        cache.keeping()
        gc()
        const before = process.memoryUsage().heapUsed
        // Each directory its own read and its own path, as a walk's are.
        for (let d = 0; cache.size < limit * 0.9; d++) {
          cache.put(Buffer.from(`/${String(d).padStart(pathLength, 'p')}`).toString(), { dev: 1, ino: d, mtimeMs: 0, ctimeMs: 0 }, readdirSync(at, { withFileTypes: true }), Date.now())
        }
        gc()
        const held = process.memoryUsage().heapUsed - before
        expect(held / cache.size, what).toBeLessThan(150)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('through the tool: a host\'s repeated listings equal listings read from disk, before and after a change', async () => {
    await makeFixture(host.cwd)
    // Past SETTLED_MS, so that the host's own walks keep what they count.
    await sleep(SETTLED_MS + 200)
    const args = { ...ARGS }
    const agent = host.agent(host.cwd)
    const call = async () => {
      const result = await execTool(host.ctx, 'list_directory', args, { agent })
      expect(result.isError).toBe(false)
      return result.value
    }
    const disk = await listThrough(host, ARGS, 'local')
    for (let i = 0; i < 3; i++) expect(await call()).toEqual(disk)
    await writeFile(join(host.cwd, 'e', 'f', 'g', '3.ts'), '3')
    await writeFile(join(host.cwd, 'e', 'f', 'g', '4.ts'), '4')
    await rm(join(host.cwd, 'outside', 'o0.ts'))
    const changed = await listThrough(host, ARGS, 'local')
    expect(changed.stats).not.toEqual(disk.stats)
    expect(await call()).toEqual(changed)
    expect(await call()).toEqual(changed)
  })
})
