import { rename, rm, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { parseArgs } from '../src/args.ts'
import { chooseSource, listDirectory } from '../src/list.ts'
import type { Child } from '../src/types.ts'
import { type LocalDir as Dir, LocalSource } from '../src/walk/local-source.ts'
import type { DirSource, LinkMode } from '../src/walk/source.ts'
import { WALK_BUDGET } from '../src/walk/walk.ts'
import { ListDir, listDirHost, makeTree } from './harness.ts'

let host: Host
beforeEach(async () => {
  host = await listDirHost()
  await makeTree(host.cwd, { 'a/locked/secret': '', 'a/open/file': '', 'a/gone/x': '', 'b': '' })
})
afterEach(async () => { await host.dispose() })

/** The real local source with one injected fault: we run as root, so permissions cannot make readdir fail. */
class FaultySource extends LocalSource {
  constructor(private readonly fault: (dir: Dir) => Promise<void>) { super() }
  override async children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    await this.fault(dir)
    return super.children(dir, links, signal)
  }
}

const call = () => ({ signal: new AbortController().signal, token: Symbol('call') as never })

const eacces = (): Error => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })

describe('faults during a listing', () => {
  it('an unreadable child directory is reported on its entry, not fatal', async () => {
    const source = new FaultySource(async (dir) => { if (dir.display.endsWith('/locked')) throw eacces() })
    const value = await listDirectory(host.ctx, { signal: new AbortController().signal, token: Symbol('t') as never }, parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source)
    expect(value.entries.find((entry) => entry.path === 'locked')).toEqual({ name: 'locked', path: 'locked', type: 'directory', error: 'permission denied' })
    expect(value.entries.map((entry) => entry.path)).toContain('open/file')
  })

  it('a directory deleted during the walk is reported as vanished', async () => {
    const source = new FaultySource(async (dir) => { if (dir.display.endsWith('/gone')) await rm(dir.local, { recursive: true }) })
    const value = await listDirectory(host.ctx, { signal: new AbortController().signal, token: Symbol('t') as never }, parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source)
    expect(value.entries.find((entry) => entry.path === 'gone')?.error).toBe('vanished during listing')
  })

  it('a subdirectory swapped for a symlink out after its parent was read is not followed', async () => {
    const outside = await makeTmpDir('outside-')
    try {
      await makeTree(outside, { 'secret.txt': '' })
      const source = new FaultySource(async (dir) => {
        if (!dir.display.endsWith('/a')) return
        // The parent has been resolved; before the walk reads it and descends, swap a child.
        await rename(join(dir.local, 'open'), join(dir.local, 'open-old'))
        await symlink(outside, join(dir.local, 'open'))
      })
      const value = await listDirectory(host.ctx, call(), parseArgs({ path: '.', recursive: true }, 100), undefined, () => source)
      // Read as a symlink entry, or refused on descent: never walked into.
      expect(value.entries.some((entry) => entry.path?.includes('secret.txt'))).toBe(false)
    } finally {
      await removeTmpDir(outside)
    }
  })

  it('a subdirectory replaced by a symlink between readdir and descent is reported, not walked', async () => {
    const outside = await makeTmpDir('outside-')
    try {
      await makeTree(outside, { 'secret.txt': '' })
      let swapped = false
      const source = new FaultySource(async (dir) => {
        if (!swapped && dir.display.endsWith('/a/locked')) {
          swapped = true
          await rename(dir.local, `${dir.local}-old`)
          await symlink(outside, dir.local)
        }
      })
      const value = await listDirectory(host.ctx, call(), parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source)
      expect(value.entries.find((entry) => entry.path === 'locked')?.error).toBe('changed while it was being read')
      expect(value.entries.some((entry) => entry.path?.includes('secret.txt'))).toBe(false)
    } finally {
      await removeTmpDir(outside)
    }
  })

  it('the walk budget never cuts a directory already read: plain counts stay exact past it', async () => {
    const many = Array.from({ length: WALK_BUDGET + 10 }, (_, i): Child => ({ name: `f${i}`, type: 'file', size: 1 }))
    const fake: DirSource = {
      kind: 'provider',
      metadata: false,
      children: async () => many.map((child) => ({ ...child })),
      child: (dir, name) => ({ display: join(dir.display, name) }),
      details: async () => {},
      count: async () => 0,
      readSmall: async () => undefined,
      exists: async () => false,
      parent: () => undefined,
    }
    const value = await listDirectory(host.ctx, call(), parseArgs({ path: 'a' }, 100), undefined, () => fake)
    expect(value.stats.total).toBe(WALK_BUDGET + 10)
    expect(value.partial).toBeUndefined()
    expect(value.truncated).toEqual({ shown: 100, total: WALK_BUDGET + 10, remaining: WALK_BUDGET - 90 })
  })

  it('an unreadable listed path is a clear error', async () => {
    const source = new FaultySource(async () => { throw eacces() })
    await expect(listDirectory(host.ctx, { signal: new AbortController().signal, token: Symbol('t') as never }, parseArgs({ path: 'a' }, 100), undefined, () => source))
      .rejects.toThrow(`cannot list "${host.cwd}/a": permission denied`)
  })

  it('an abort during the walk stops it', async () => {
    const controller = new AbortController()
    const source = new FaultySource(async (dir) => { if (dir.display.endsWith('/open')) controller.abort() })
    await expect(listDirectory(host.ctx, { signal: controller.signal, token: Symbol('t') as never }, parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source))
      .rejects.toMatchObject({ code: 'FS_ABORTED' })
  })

  it('an abort during execution through the pipeline is ABORTED', async () => {
    const controller = new AbortController()
    // A slow-to-answer pre-execute listener lets the body start, then the caller aborts.
    host.ctx.on('tools/execute', async (_exec, next) => {
      const pending = next()
      controller.abort()
      return pending
    })
    const result = await execTool(host.ctx, 'list_directory', { path: 'a', recursive: true }, { signal: controller.signal })
    expect(result.isError && result.error.info?.code).toBe('FS_ABORTED')
  })
})

describe('under the real sandboxing filesystem (the dsh base bundle)', () => {
  it('lists with the fast path (its reads are the local ones), with the same text and full metadata', async () => {
    const sandboxed = await bootHost({ cwd: host.cwd, sandbox: 'workspace-write' })
    try {
      await sandboxed.ctx.plugin(ListDir, {})
      expect(sandboxed.ctx.fs.sandboxMode).toBe('workspace-write')
      const target = await sandboxed.ctx.fs.resolve('.')
      expect(chooseSource(sandboxed.ctx, { display: target.displayPath, target }).kind).toBe('local')
      const expected = textOf(await execTool(host.ctx, 'list_directory', { path: 'a', recursive: true }))
      expect(expected).toContain('locked/')
      expect(textOf(await execTool(sandboxed.ctx, 'list_directory', { path: 'a', recursive: true }))).toBe(expected)
      await symlink('open', join(host.cwd, 'a/alias'))
      expect(textOf(await execTool(sandboxed.ctx, 'list_directory', { path: 'a', recursive: true }))).toContain('└── alias -> open')
      const long = textOf(await execTool(sandboxed.ctx, 'list_directory', { path: 'a', long: true }))
      expect(long).not.toContain('not reported by this filesystem provider')
      expect(long).toBe(textOf(await execTool(host.ctx, 'list_directory', { path: 'a', long: true })))
      expect(textOf(await execTool(sandboxed.ctx, 'list_directory', { path: 'a', sort: 'modified' }))).not.toMatch(/^Error/)
    } finally {
      await sandboxed.dispose()
    }
  })
})
