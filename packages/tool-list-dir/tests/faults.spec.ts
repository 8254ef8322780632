import { rm } from 'node:fs/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import { parseArgs } from '../src/args.ts'
import { chooseSource, listDirectory } from '../src/list.ts'
import { LocalSource } from '../src/local-source.ts'
import type { Child, Dir, LinkMode } from '../src/types.ts'
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

const eacces = (): Error => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' })

describe('faults during a listing', () => {
  it('an unreadable child directory is reported on its entry, not fatal', async () => {
    const source = new FaultySource(async (dir) => { if (dir.display.endsWith('/locked')) throw eacces() })
    const value = await listDirectory(host.ctx, { signal: new AbortController().signal, token: Symbol('t') as never }, parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source)
    expect(value.entries.find((entry) => entry.path === 'locked')).toEqual({ name: 'locked', path: 'locked', type: 'directory', error: 'permission denied' })
    expect(value.entries.map((entry) => entry.path)).toContain('open/file')
  })

  it('a directory deleted during the walk is reported as vanished', async () => {
    const source = new FaultySource(async (dir) => { if (dir.display.endsWith('/gone')) await rm(dir.local!, { recursive: true }) })
    const value = await listDirectory(host.ctx, { signal: new AbortController().signal, token: Symbol('t') as never }, parseArgs({ path: 'a', recursive: true }, 100), undefined, () => source)
    expect(value.entries.find((entry) => entry.path === 'gone')?.error).toBe('vanished during listing')
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
  it('lists through ctx.fs, not the fast path, with the same text', async () => {
    const sandboxed = await bootHost({ cwd: host.cwd, sandbox: 'workspace-write' })
    try {
      await sandboxed.ctx.plugin(ListDir, {})
      expect(sandboxed.ctx.fs.sandboxMode).toBe('workspace-write')
      const target = await sandboxed.ctx.fs.resolve('.')
      expect(chooseSource(sandboxed.ctx, { display: target.displayPath, target }).kind).toBe('provider')
      const expected = textOf(await execTool(host.ctx, 'list_directory', { path: 'a', recursive: true }))
      expect(expected).toContain('locked/')
      expect(textOf(await execTool(sandboxed.ctx, 'list_directory', { path: 'a', recursive: true }))).toBe(expected)
    } finally {
      await sandboxed.dispose()
    }
  })
})
