import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@deepseek-ai/dsh-fs-local'
import { bootHost, type Host } from '@gencode-ai/testkit'
import { readsAreLocal } from '../src/local-reads.ts'

describe('readsAreLocal: which providers the node:fs fast path may stand in for', () => {
  let local: Host
  let sandboxed: Host
  beforeAll(async () => {
    local = await bootHost()
    sandboxed = await bootHost({ sandbox: 'workspace-write' })
  })
  afterAll(async () => {
    await local.dispose()
    await sandboxed.dispose()
  })

  it('the bare dsh-fs-local and the product dsh-fs-sandbox, as composed by the host', () => {
    expect(local.ctx.fs.sandboxMode).toBeUndefined()
    expect(readsAreLocal(local.ctx.fs)).toBe(true)
    expect(sandboxed.ctx.fs.sandboxMode).toBe('workspace-write')
    expect(readsAreLocal(sandboxed.ctx.fs)).toBe(true)
  })

  it('another copy of dsh-fs-local than the plugin would load (no instanceof)', async () => {
    const entry = createRequire(import.meta.url).resolve('@deepseek-ai/dsh-fs-local')
    const copy = await import(`${pathToFileURL(entry).href}?copy`) as { LocalFileSystem: typeof LocalFileSystem }
    expect(copy.LocalFileSystem).not.toBe(LocalFileSystem)
    expect(readsAreLocal(Object.create(copy.LocalFileSystem.prototype) as object)).toBe(true)
  })

  it('fails safe: a subclass that changes a read, an instance-level read, or an unknown provider', () => {
    class Remote extends LocalFileSystem {
      override async readText(...args: Parameters<LocalFileSystem['readText']>) { return super.readText(...args) }
    }
    expect(readsAreLocal(Object.create(Remote.prototype) as object)).toBe(false)
    const patched = Object.create(LocalFileSystem.prototype) as object
    Object.defineProperty(patched, 'streamText', { value: () => undefined })
    expect(readsAreLocal(patched)).toBe(false)
    class LocalFileSystemLookalike { readText() { return '' } }
    Object.defineProperty(LocalFileSystemLookalike, 'name', { value: 'LocalFileSystem' })
    expect(readsAreLocal(new LocalFileSystemLookalike())).toBe(false)
    expect(readsAreLocal({})).toBe(false)
    expect(readsAreLocal(Object.create(null) as object)).toBe(false)
  })

  it('readByteRange (DSH 0.1.3): a provider that overrides it is not local; the local class may have it or lack it', () => {
    // rc.8's local provider has none, and stays local.
    expect(Object.hasOwn(LocalFileSystem.prototype, 'readByteRange')).toBe(false)
    const range = async (): Promise<Uint8Array> => new Uint8Array(0)
    class Remote extends LocalFileSystem {
      async readByteRange() { return range() }
    }
    expect(readsAreLocal(Object.create(Remote.prototype) as object)).toBe(false)
    const patched = Object.create(LocalFileSystem.prototype) as object
    Object.defineProperty(patched, 'readByteRange', { value: range })
    expect(readsAreLocal(patched)).toBe(false)
    // A later host's local provider defines every read itself, readByteRange included: at 0.1.7-rc.2,
    // packages/fs/fs/src/index.ts declares it abstract and packages/fs/fs-local/src/index.ts implements it in LocalFileSystem.
    const later = { LocalFileSystem: class extends LocalFileSystem {} }.LocalFileSystem
    Object.defineProperty(later, 'name', { value: 'LocalFileSystem' })
    const base = LocalFileSystem.prototype as unknown as Record<string, unknown>
    for (const method of ['processPath', 'lstat', 'readText', 'streamText', 'readBytes', 'listDir']) {
      Object.defineProperty(later.prototype, method, { value: base[method] })
    }
    Object.defineProperty(later.prototype, 'readByteRange', { value: range })
    expect(readsAreLocal(Object.create(later.prototype) as object)).toBe(true)
    // ...but not when it lacks one of the first host's reads.
    class Partial extends LocalFileSystem {}
    Object.defineProperty(Partial, 'name', { value: 'LocalFileSystem' })
    Object.defineProperty(Partial.prototype, 'readByteRange', { value: range })
    expect(readsAreLocal(Object.create(Partial.prototype) as object)).toBe(false)
  })
})
