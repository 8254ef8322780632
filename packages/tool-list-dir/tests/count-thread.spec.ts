/**
 * The count thread: past a full window a local walk hands subtrees to a worker thread that counts them beside it. Its
 * totals must be the ones the walk alone gives, on trees with .gitignore files at several levels, tracked files under
 * ignored directories, names that are not UTF-8, links and heavy directories; an aborted walk and a thread that dies
 * mid-walk must leave no descriptor open, and a dead thread must make the totals say they are lower bounds.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readlinkSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, type Host } from '@gencode-ai/testkit'
import type { ListArgs } from '../src/args.ts'
import type { Listing } from '../src/types.ts'
import { SharedBudget } from '../src/walk.ts'
import { listDirHost, listThrough, makeTree, WatchedThread } from './harness.ts'

let host: Host

/** This process's descriptors open on the tree's directories (the walk's and the thread's own, and those lent to it). */
const openDescriptors = (): string[] => readdirSync('/proc/self/fd').flatMap((fd) => {
  try {
    const target = readlinkSync(`/proc/self/fd/${fd}`)
    return target.startsWith(host.cwd) ? [target] : []
  } catch {
    return [] // closed since it was listed (readdir's own)
  }
})

/** Lent descriptors are closed when the thread's answer arrives, which may be just after the walk has ended. */
async function noneOpen(): Promise<void> {
  for (let waited = 0; openDescriptors().length > 0 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(openDescriptors()).toEqual([])
}

/** A tree wide enough that a walk past its window has subtrees to hand on at several levels. */
async function makeWide(cwd: string): Promise<void> {
  const tree: Record<string, string | null | { link: string }> = {
    '.gitignore': '*.log\nbuild/\n!keep.log\n',
    'pkg0/.gitignore': 'gen/\n*.snap\n',
    'pkg3/mod1/.gitignore': '*\n!*.ts\n',
    'pkg2/node_modules/x/index.js': 'x',
    'pkg4/to-pkg0': { link: '../pkg0' },
    'pkg4/dangling': { link: 'missing' },
  }
  for (let a = 0; a < 6; a++) {
    for (let b = 0; b < 5; b++) {
      for (let c = 0; c < 4; c++) tree[`pkg${a}/mod${b}/f${c}.${c % 2 === 0 ? 'ts' : 'log'}`] = 'x'.repeat(c)
      tree[`pkg${a}/mod${b}/build/out.js`] = 'o'
      tree[`pkg${a}/mod${b}/gen/g.ts`] = 'g'
      tree[`pkg${a}/mod${b}/keep.log`] = 'k'
      tree[`pkg${a}/mod${b}/deep/er/leaf.snap`] = 's'
    }
  }
  await makeTree(cwd, tree)
  const raw = Buffer.concat([Buffer.from(join(cwd, 'pkg5', 'raw')), Buffer.from([0xff])])
  await mkdir(raw)
  await writeFile(Buffer.concat([raw, Buffer.from('/inner.ts')]), 'i')
}

describe('the count thread gives the totals the walk alone gives', () => {
  let thread: WatchedThread
  beforeAll(async () => {
    host = await listDirHost({}, { sandbox: 'workspace-write' })
    await makeWide(host.cwd)
    execFileSync('git', ['init', '-q'], { cwd: host.cwd })
    // Tracked, though ignored: git's rule keeps it shown (and its directory entered) whoever counts it.
    execFileSync('git', ['add', '-f', 'pkg4/mod2/build/out.js', 'pkg1/mod0/f1.log'], { cwd: host.cwd })
    thread = await new WatchedThread().loaded()
  })
  afterAll(async () => {
    thread.close()
    await host.dispose()
  })

  const shapes: ListArgs[] = [
    { path: '.', recursive: true, depth: 5 },
    { path: '.', recursive: true, depth: 2 },
    { path: '.', recursive: true, depth: 5, ignore: ['*.ts', 'mod3'] },
    { path: '.', recursive: true, depth: 5, all: true },
    { path: 'pkg0', recursive: true, depth: 4 },
  ]
  for (const shape of shapes) {
    it(JSON.stringify(shape), async () => {
      for (const limit of [1, 7, 100]) {
        const alone = await listThrough(host, { ...shape, limit }, 'local')
        const sent = thread.sent
        const helped = await listThrough(host, { ...shape, limit }, 'local', thread)
        expect(helped).toEqual(alone)
        if (limit === 1 && (shape.depth ?? 3) > 2) expect(thread.sent).toBeGreaterThan(sent) // subtrees were handed on
      }
      await noneOpen()
    })
  }

  it('an aborted walk ends as aborted, with every lent descriptor closed, and the thread serves the next walk', async () => {
    const controller = new AbortController()
    const request = thread.request.bind(thread)
    // Aborted right after the walk hands the thread its first subtrees, while it counts them.
    thread.request = (sent) => {
      const reply = request(sent)
      controller.abort()
      return reply
    }
    const shape: ListArgs = { path: '.', recursive: true, depth: 5, limit: 1 }
    await expect(listThrough(host, shape, 'local', thread, controller.signal)).rejects.toThrow(/abort/i)
    thread.request = request
    await thread.loaded()
    await noneOpen()
    expect(await listThrough(host, shape, 'local', thread)).toEqual(await listThrough(host, shape, 'local'))
  })

  it('an idle thread is ended, and started again by the next warm', async () => {
    const idle = await new WatchedThread(300).loaded()
    for (let waited = 0; idle.free() && waited < 20_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(idle.free()).toBe(false) // ended: no longer loaded
    const shape: ListArgs = { path: '.', recursive: true, depth: 5, limit: 1 }
    // A walk meanwhile is counted by the walk alone.
    expect(await listThrough(host, shape, 'local', idle)).toEqual(await listThrough(host, shape, 'local'))
    await idle.loaded()
    const sent = idle.sent
    expect(await listThrough(host, shape, 'local', idle)).toEqual(await listThrough(host, shape, 'local'))
    expect(idle.sent).toBeGreaterThan(sent)
    idle.close()
    await noneOpen()
  })

  it('a thread that dies counting a subtree leaves totals marked as lower bounds, and no descriptor open', async () => {
    const dying = await new WatchedThread().loaded()
    const request = dying.request.bind(dying)
    // The worker is terminated once it has claimed the first subtree it was handed (the walk waits here until it has).
    dying.request = (sent) => {
      const reply = request(sent)
      if (dying.sent === 1) {
        while (Atomics.load(sent.claims, 0) === 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1)
        dying.close()
      }
      return reply
    }
    const alone = await listThrough(host, { path: '.', recursive: true, depth: 5, limit: 1 }, 'local')
    const helped: Listing = await listThrough(host, { path: '.', recursive: true, depth: 5, limit: 1 }, 'local', dying)
    expect(dying.sent).toBe(1)
    expect(helped.partial).toBe(true)
    expect(helped.stats.total).toBeLessThan(alone.stats.total)
    await noneOpen()
  })

  it('what the thread has not claimed when the walk is done is counted by the walk', async () => {
    const idle = await new WatchedThread().loaded()
    // A thread that never claims (its requests never reach it): the walk counts every subtree it handed on itself.
    idle.request = (_request) => {
      idle.sent++
      return new Promise((resolve) => { setTimeout(() => { resolve({ error: 'never answered' }) }, 50) })
    }
    const alone = await listThrough(host, { path: '.', recursive: true, depth: 5, limit: 1 }, 'local')
    const helped = await listThrough(host, { path: '.', recursive: true, depth: 5, limit: 1 }, 'local', idle)
    expect(idle.sent).toBeGreaterThan(0)
    expect(helped).toEqual(alone)
    idle.close()
    await noneOpen()
  })
})

describe('a walk and its count thread share one budget', () => {
  it('each publishes what it counted and sees the sum', () => {
    const cells = new Int32Array(new SharedArrayBuffer(12))
    const walk = new SharedBudget(cells, 0)
    expect(walk.spent(5)).toBe(5)
    expect(new SharedBudget(cells, 1).spent(3)).toBe(8)
    // A later part of the thread's share starts from what its earlier parts counted.
    expect(new SharedBudget(cells, 1).spent(2)).toBe(10)
    expect(walk.spent(6)).toBe(11)
  })
})

describe('countThread: false', () => {
  it('lists through the host as the default configuration does (whose thread starts after a walk of 10,000 entries)', async () => {
    const plain = await listDirHost({ countThread: false }, { sandbox: 'workspace-write' })
    const helped = await listDirHost({}, { sandbox: 'workspace-write' })
    try {
      for (const each of [plain, helped]) {
        await makeWide(each.cwd)
        for (let dir = 0; dir < 40; dir++) {
          const at = join(each.cwd, `d${dir % 8}`, `e${dir}`)
          await mkdir(at, { recursive: true })
          await Promise.all(Array.from({ length: 255 }, (_, file) => writeFile(join(at, `f${file}`), '')))
        }
      }
      const args = { path: '.', recursive: true, depth: 5, limit: 3 }
      const values: unknown[] = []
      for (const each of [plain, helped]) {
        for (let call = 0; call < 3; call++) {
          const result = await execTool(each.ctx, 'list_directory', args)
          expect(result.isError).toBe(false)
          if (call === 2) values.push({ ...(result.value as Listing), path: '' })
          await new Promise((resolve) => setTimeout(resolve, 500)) // the default host's thread loads meanwhile
        }
      }
      expect(values[0]).toEqual(values[1])
      expect((values[0] as Listing).stats.total).toBeGreaterThan(10_000)
    } finally {
      await plain.dispose()
      await helped.dispose()
    }
  }, 60_000)
})
