import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import { presentCall, presentResult } from '../src/present.ts'
import { readHost } from './harness.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

describe('UI presentation', () => {
  it('presentCall titles the card with the window and follows the file', () => {
    expect(presentCall({ file_path: 'src/a.ts', offset: 5, limit: 4 })).toEqual({
      card: 'generic', title: 'Read src/a.ts (5 - 8)', kind: 'read', locations: [{ path: 'src/a.ts', line: 5 }],
    })
    expect(presentCall({ file_path: 'a.ts', offset: 9 }).title).toBe('Read a.ts (from 9)')
    expect(presentCall({ file_path: 'a.ts' }).title).toBe('Read a.ts')
  })

  it('presentResult rebuilds the read card from the persisted meta of a real call', async () => {
    await writeFile(join(host.cwd, 'card.txt'), 'alpha\nbeta\ngamma\n')
    const result = await execTool(host.ctx, 'read_file', { file_path: 'card.txt', offset: 2 })
    expect(result.isError).toBe(false)
    // Replay sees only content + meta (JSON round trip), never the canonical value.
    const replayed = JSON.parse(JSON.stringify({ isError: false, content: result.content, meta: result.meta })) as ToolResult
    expect(presentResult({ file_path: 'card.txt', offset: 2 }, replayed)).toEqual({
      card: 'read',
      path: join(host.cwd, 'card.txt'),
      offset: 2,
      lines: [{ number: 2, text: 'beta' }, { number: 3, text: 'gamma' }],
      totalLines: 3,
      content: [{ type: 'text', text: '2\tbeta\n3\tgamma' }],
    })
    expect(presentResult({ file_path: 'x' }, { isError: false, content: [], meta: { kind: 'text' } })).toBeUndefined()
  })
})

describe('more errors', () => {
  it('a FIFO is not a regular file', async () => {
    execFileSync('mkfifo', [join(host.cwd, 'pipe')])
    const result = await execTool(host.ctx, 'read_file', { file_path: 'pipe' })
    expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'pipe')}": not a regular file (a device, socket or pipe)`)
  })

  it('non-UTF-8 text larger than maxFileBytes: decoded off the local disk; a provider that reads it whole says what to do', async () => {
    const wide = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello there\n', 'utf16le')])
    // The product composition reads off the local disk; a provider whose reads are its own
    // (here: dsh-fs-local with readBytes wrapped on the instance) goes through ctx.fs.
    const local = await readHost({ maxFileBytes: 8 }, { sandbox: 'workspace-write' })
    const remote = await readHost({ maxFileBytes: 8 })
    const fs = remote.ctx.fs
    fs.readBytes = fs.readBytes.bind(fs)
    try {
      await writeFile(join(local.cwd, 'wide.txt'), wide)
      expect(textOf(await execTool(local.ctx, 'read_file', { file_path: 'wide.txt' }))).toBe('1\thello there')
      await writeFile(join(remote.cwd, 'wide.txt'), wide)
      const result = await execTool(remote.ctx, 'read_file', { file_path: 'wide.txt' })
      expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_TOO_LARGE')
      expect(textOf(result)).toBe(
        `Error: cannot read "${join(remote.cwd, 'wide.txt')}": not UTF-8 text, and this file system provider reads other text whole, so a file over maxFileBytes (8) is not decoded — convert it to UTF-8, read a smaller file, or raise maxFileBytes in tool-read's config`,
      )
      // Within maxFileBytes, NUL-heavy content without a BOM is binary.
      await writeFile(join(remote.cwd, 'blob.txt'), Buffer.from([1, 0, 2, 0]))
      expect(textOf(await execTool(remote.ctx, 'read_file', { file_path: 'blob.txt' }))).toMatch(/^Error: cannot read ".*blob\.txt": binary file \(/)
    } finally {
      await local.dispose()
      await remote.dispose()
    }
  })
})
