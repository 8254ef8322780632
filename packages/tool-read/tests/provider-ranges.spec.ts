/**
 * The provider path through a provider that has readByteRange (DSH 0.1.3 on): a window of a big
 * file is read in ranges, never whole, and reads as the local fast path reads it. The stand-in
 * provider's range read has the shape FileSystem.readByteRange declares in
 * packages/fs/fs/src/index.ts at 0.1.7-rc.2 (the bytes at [offset, offset + length), shorter at
 * the end of the file, empty at or past it), and counts every byte it hands out.
 */
import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalFileSystem } from '@deepseek-ai/dsh-fs-local'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { readsAreLocal } from '@gencode-ai/dsh-tool-common'
import { readHost } from './harness.ts'

/** A remote provider's stand-in: its own range read (so not local by shape), counting what it transfers. */
class RangedProvider extends LocalFileSystem {
  ranges = 0
  rangeBytes = 0
  largestRange = 0
  wholeReads = 0
  streams = 0

  async readByteRange(target: FsTarget, range: { offset: number, length: number }, signal?: AbortSignal): Promise<Uint8Array> {
    signal?.throwIfAborted()
    const handle = await open(this.processPath(target), 'r')
    try {
      const buffer = Buffer.alloc(range.length)
      let filled = 0
      while (filled < range.length) {
        const { bytesRead } = await handle.read(buffer, filled, range.length - filled, range.offset + filled)
        if (bytesRead === 0) break
        filled += bytesRead
      }
      this.ranges++
      this.rangeBytes += filled
      this.largestRange = Math.max(this.largestRange, filled)
      return buffer.subarray(0, filled)
    } finally {
      await handle.close()
    }
  }

  override async readBytes(...args: Parameters<LocalFileSystem['readBytes']>): Promise<Uint8Array> {
    this.wholeReads++
    return await super.readBytes(...args)
  }

  override async readText(...args: Parameters<LocalFileSystem['readText']>): Promise<string> {
    this.wholeReads++
    return await super.readText(...args)
  }

  override async streamText(...args: Parameters<LocalFileSystem['streamText']>): Promise<AsyncIterable<string>> {
    this.streams++
    return await super.streamText(...args)
  }

  reset(): void {
    this.ranges = 0
    this.rangeBytes = 0
    this.largestRange = 0
    this.wholeReads = 0
    this.streams = 0
  }
}

const MAX_FILE_BYTES = 1024 * 1024
let remote: Host
let local: Host
let provider: RangedProvider

beforeAll(async () => {
  remote = await readHost({ maxFileBytes: MAX_FILE_BYTES }, { fileSystem: RangedProvider })
  provider = remote.ctx.fs as RangedProvider
  local = await readHost({ maxFileBytes: MAX_FILE_BYTES }, { cwd: remote.cwd })
})
afterAll(async () => {
  await local.dispose()
  await remote.dispose()
})

/** The same call on the ranged provider and on the local fast path, over the same file. */
async function both(name: string, args: Record<string, unknown> = {}) {
  provider.reset()
  const viaRanges = await execTool(remote.ctx, 'read_file', { file_path: name, ...args })
  const { ranges, rangeBytes: bytes, largestRange: largest, wholeReads: whole, streams } = provider
  const counted = { ranges, bytes, largest, whole, streams }
  const viaLocal = await execTool(local.ctx, 'read_file', { file_path: name, ...args })
  const outcome = (result: typeof viaRanges) => ({
    isError: result.isError, text: textOf(result), value: result.isError ? undefined : result.value,
  })
  return { ranged: outcome(viaRanges), local: outcome(viaLocal), counted }
}

describe('read_file through a provider with readByteRange', () => {
  it('is the provider path (the stand-in is not local), and the local host is the fast path', () => {
    expect(readsAreLocal(remote.ctx.fs)).toBe(false)
    expect(readsAreLocal(local.ctx.fs)).toBe(true)
  })

  const cases: Record<string, () => Buffer> = {
    'utf-8.txt': () => Buffer.from(Array.from({ length: 3000 }, (_, i) => `line ${i} é漢字😀`).join('\n')),
    'bom.txt': () => Buffer.from('\uFEFFx\ny\n'),
    'utf-16le.txt': () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\nb\n', 'utf16le')]),
    'gbk.txt': () => iconv.encode(Array.from({ length: 5000 }, (_, i) => `${i} 中文注释，编码测试 ${'汉'.repeat(i % 40)}`).join('\r\n'), 'gbk'),
    'windows-1252.txt': () => iconv.encode('café crème — 5 € and it’s “quoted”\n'.repeat(3), 'windows-1252'),
    'nul.bin': () => Buffer.concat([Buffer.from('text\n'), Buffer.from([0]), Buffer.from('more\n')]),
    'invalid-utf8.txt': () => Buffer.concat([Buffer.from('ok\n'.repeat(30000)), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]),
    'empty.txt': () => Buffer.alloc(0),
  }
  for (const [name, make] of Object.entries(cases)) {
    it(`${name}: reads as the fast path does, in ranges of at most 1 MiB, never whole`, async () => {
      await writeFile(join(remote.cwd, name), make())
      for (const args of [{}, { offset: 3, limit: 5 }, { offset: 900, limit: 50 }]) {
        const { ranged, local: fast, counted } = await both(name, args)
        expect(ranged).toEqual(fast)
        expect(counted.whole + counted.streams).toBe(0)
        // An empty file (size 0 by stat) needs no range at all.
        expect(counted.ranges > 0).toBe(make().length > 0)
        expect(counted.largest).toBeLessThanOrEqual(1024 * 1024)
      }
    })
  }

  it('a legacy-encoded file over maxFileBytes is decoded in ranges (it was refused as read whole)', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `${i} 中文注释，编码测试 ${'汉'.repeat(i % 40)}`)
    const bytes = iconv.encode(lines.join('\n'), 'gbk')
    expect(bytes.length).toBeGreaterThan(2 * MAX_FILE_BYTES)
    await writeFile(join(remote.cwd, 'big-gbk.txt'), bytes)
    const { ranged, local: fast, counted } = await both('big-gbk.txt', { offset: 40_000, limit: 3 })
    expect(ranged.isError).toBe(false)
    expect(ranged).toEqual(fast)
    expect(ranged.text).toContain('40000 中文注释')
    expect(counted.whole).toBe(0)
    expect(counted.largest).toBeLessThanOrEqual(1024 * 1024)
    expect(counted.ranges).toBeGreaterThan(2)
  })

  it('a window at the head of a file beyond 64 MiB stops early: a few ranges, not the file', async () => {
    const path = join(remote.cwd, 'big.log')
    const handle = await open(path, 'w')
    const block = Buffer.from('0123456789abcdef\n'.repeat(4096))
    const size = 70 * 1024 * 1024
    for (let written = 0; written < size; written += block.length) await handle.write(block)
    await handle.close()
    const { ranged, local: fast, counted } = await both('big.log', { offset: 1, limit: 10 })
    expect(ranged.isError).toBe(false)
    expect(ranged).toEqual(fast)
    expect(counted.whole).toBe(0)
    expect(counted.bytes).toBeLessThan(8 * 1024 * 1024)
  })
})
