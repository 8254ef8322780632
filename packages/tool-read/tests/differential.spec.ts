/**
 * The local fast path must give byte-identical results to the ctx.fs provider path: same
 * windows, same totals and estimates, same encodings and observations, same errors. Both run
 * here on the same files, on both providers whose reads are local: the bare dsh-fs-local and
 * the product's dsh-fs-sandbox.
 */
import { mkdir, open, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import iconv from 'iconv-lite'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { Config } from '../src/config.ts'
import type { TextValue } from '../src/formats/text/value.ts'
import { readText } from '../src/formats/text/reader.ts'
import { Source } from '../src/source.ts'
import { localPath } from '../src/target.ts'
import { statRegular } from '../src/target.ts'
import type { WindowRequest } from '../src/formats/text/window.ts'
import { readHost } from './harness.ts'

let host: Host

/** Each block runs once per composition, the product's (dsh-fs-sandbox, workspace-write) first. */
function describeOnBoth(name: string, body: () => void): void {
  for (const [provider, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' }], ['dsh-fs-local', {}]] as const) {
    describe(`${name} (${provider})`, () => {
      beforeAll(async () => { host = await readHost({}, options) })
      afterAll(async () => { await host.dispose() })
      body()
    })
  }
}

const CHUNK = 64 * 1024

async function both(name: string, request: WindowRequest, encoding?: string) {
  const target = await host.ctx.fs.resolve(join(host.cwd, name))
  const info = (await host.ctx.fs.stat(target))!
  const exec = { signal: new AbortController().signal } as ToolExecution
  const config = { maxLineLength: request.maxLineLength, maxBytes: request.maxBytes } as Config
  const options = { offset: request.offset, limit: request.limit, ...encoding === undefined ? {} : { encoding } }
  const run = async (fastPath: boolean) => {
    const local = fastPath ? localPath(host.ctx, target) : undefined
    if (fastPath && local === undefined) throw new Error('the fast path does not apply')
    const source = await Source.open(host.ctx, exec, target, info, 50 * 1024 * 1024, local, 'list_directory')
    try {
      return await readText({ source, call: { ctx: host.ctx, exec }, config, options })
        .then((result) => ({ value: result.value as TextValue, observe: result.observe }), (error: Error) => ({ error: `${error.constructor.name}: ${error.message}` }))
    } finally {
      await source.close()
    }
  }
  return { fast: await run(true), provider: await run(false) }
}

const windows: WindowRequest[] = [
  { offset: 1, limit: 2000, maxLineLength: 2000, maxBytes: 102400 },
  { offset: 3, limit: 5, maxLineLength: 7, maxBytes: 102400 },
  { offset: 1, limit: 100000, maxLineLength: 3, maxBytes: 2048 },
  { offset: 900, limit: 50, maxLineLength: 40, maxBytes: 102400 },
]

const cases: Record<string, () => Buffer> = {
  'ascii lines': () => Buffer.from(Array.from({ length: 3000 }, (_, i) => `line ${i}`).join('\n')),
  'crlf and a lone CR at a chunk edge': () => {
    const head = Buffer.alloc(CHUNK - 1, 'a')
    return Buffer.concat([head, Buffer.from('\r\nb\r\n\rc\r')])
  },
  'multibyte characters split across chunk boundaries': () => {
    const parts: Buffer[] = []
    for (let i = 0; i < 4000; i++) parts.push(Buffer.from(`${i}: é漢字😀 ${'ü'.repeat(i % 50)}\n`))
    return Buffer.concat(parts)
  },
  'a long line with 4-byte characters spanning chunks': () => Buffer.from(`start\n${'😀ab'.repeat(60000)}\nend\n`),
  'BOM': () => Buffer.from('\uFEFFx\ny\n'),
  'NUL in the first 8 KiB': () => Buffer.concat([Buffer.from('text\n'), Buffer.from([0]), Buffer.from('more\n')]),
  'NUL after the 8 KiB sample (text, as the provider reads it)': () => Buffer.concat([Buffer.alloc(9000, 'q'), Buffer.from('\n\0tail\n')]),
  'invalid UTF-8 mid-file': () => Buffer.concat([Buffer.from('ok\n'.repeat(30000)), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]),
  'truncated sequence at EOF': () => Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xe6, 0xbc])]),
  'overlong encoding': () => Buffer.concat([Buffer.from('a\n'), Buffer.from([0xe0, 0x80, 0x80]), Buffer.from('\n')]),
  'UTF-16LE with BOM': () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\nb\n', 'utf16le')]),
  'UTF-16BE with BOM': () => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('a\nb\n', 'utf16le').swap16()]),
  'UTF-32LE with BOM': () => iconv.encode('a\n漢😀\n', 'utf-32le', { addBOM: true }),
  'UTF-32BE with BOM': () => iconv.encode('a\n漢😀\n', 'utf-32be', { addBOM: true }),
  'GBK, lines across chunk boundaries': () => iconv.encode(Array.from({ length: 5000 }, (_, i) => `${i} 中文注释，编码测试 ${'汉'.repeat(i % 40)}`).join('\r\n'), 'gbk'),
  'GB18030 four-byte characters in a long line': () => iconv.encode(`开始\n${'😀中ab'.repeat(30000)}\n结束\n`, 'gb18030'),
  'Big5': () => iconv.encode('這是繁體中文的檔案，用於測試編碼偵測功能。\n第二行：臺灣的資料。\n'.repeat(50), 'big5'),
  'Shift_JIS': () => iconv.encode('これは日本語のテキストです。文字コードの検出をテストします。\n'.repeat(50), 'shift_jis'),
  'windows-1252': () => iconv.encode('café crème — 5 € and it’s “quoted”\n'.repeat(3), 'windows-1252'),
  'a lead byte before a line feed': () => Buffer.concat([iconv.encode('中文\n'.repeat(20), 'gbk'), Buffer.from([0xd6, 0x0a, 0x41, 0x0a])]),
  'CR-only lines, a CR at a chunk edge before and after an LF': () => {
    const bar = Array.from({ length: 3000 }, (_, i) => `step ${i} ${'#'.repeat(i % 30)}`).join('\r')
    return Buffer.concat([Buffer.from(bar.slice(0, CHUNK - 1)), Buffer.from('\r\n'), Buffer.from(bar.slice(CHUNK - 1)), Buffer.from('\r')])
  },
  'a CR as the last byte of a chunk, a lone CR then': () => Buffer.concat([Buffer.alloc(CHUNK - 1, 'b'), Buffer.from('\rnext\rlast')]),
  'a NUL on line 900, past the 8 KiB sample': () => Buffer.from(Array.from({ length: 1000 }, (_, i) => i === 899 ? 'x\0y' : `line ${i}`).join('\n')),
  'UTF-8 BOM and bad bytes': () => Buffer.concat([Buffer.from('\uFEFFname,city\nJosé,Zürich\n'), Buffer.from([0xe9, 0x0a, 0x80, 0x0a])]),
  'bad bytes and a character cut by the end': () => Buffer.concat([Buffer.from('é漢\n'.repeat(3000)), Buffer.from([0xff, 0x0a, 0xe6, 0xbc])]),
  'windows-1251 with CR-only lines': () => iconv.encode(Array.from({ length: 300 }, (_, i) => `${i} В гимназии он не был первым учеником, но учителя его любили.`).join('\r'), 'windows-1251'),
  'UTF-16LE without BOM, CRLF': () => iconv.encode(Array.from({ length: 300 }, (_, i) => `${i} plain text line`).join('\r\n'), 'utf-16le'),
  'empty': () => Buffer.alloc(0),
  'only newlines': () => Buffer.from('\n\n\n'),
}

describeOnBoth('fast path = provider path', () => {
  it('an encoding argument decodes alike, whatever the content', async () => {
    await writeFile(join(host.cwd, 'forced.txt'), iconv.encode('第一行\n第二行\n', 'gbk'))
    for (const encoding of ['gbk', 'big5', 'utf-16le', 'latin1', 'utf-8']) {
      for (const request of windows) {
        const { fast, provider } = await both('forced.txt', request, encoding)
        expect(fast).toEqual(provider)
      }
    }
  })

  for (const [name, make] of Object.entries(cases)) {
    it(name, async () => {
      const file = `${name.replace(/\W+/g, '-')}.txt`
      await writeFile(join(host.cwd, file), make())
      for (const request of windows) {
        const { fast, provider } = await both(file, request)
        expect(fast).toEqual(provider)
      }
    })
  }

  it('files beyond 64 MiB: same estimate; invalid bytes past maxFileBytes are decoded only off the local disk', async () => {
    const path = join(host.cwd, 'big.bin')
    const handle = await open(path, 'w')
    const block = Buffer.from('0123456789abcdef\n'.repeat(CHUNK / 16))
    for (let i = 0; i < 1100; i++) await handle.write(block)
    await handle.close()
    // Invalid bytes in the chunk holding the window's end, then in a later chunk.
    const patch = await open(path, 'r+')
    await patch.write(Buffer.from([0xff]), 0, 1, CHUNK * 2 + 100)
    await patch.write(Buffer.from([0xff]), 0, 1, CHUNK * 40 + 3)
    await patch.close()
    const outcomes: string[] = []
    for (const request of [
      { offset: 1, limit: 10, maxLineLength: 2000, maxBytes: 102400 },
      { offset: 7712, limit: 5, maxLineLength: 2000, maxBytes: 102400 },
      { offset: 200_000, limit: 3, maxLineLength: 2000, maxBytes: 102400 },
    ]) {
      const { fast, provider } = await both('big.bin', request)
      if ('error' in provider) {
        // A provider reads non-UTF-8 text whole, and this file is over maxFileBytes; the local disk is streamed.
        expect(provider.error).toContain('not UTF-8 text, and this file system provider reads other text whole')
        outcomes.push('error' in fast ? 'error' : fast.value.encoding)
      } else {
        expect(fast).toEqual(provider)
        outcomes.push('error' in fast ? 'error' : (fast.value.total_exact ? 'exact' : 'estimate'))
      }
    }
    expect(outcomes).toEqual(['estimate', 'windows-1252', 'windows-1252'])
  })

  it('files beyond 64 MiB of multibyte text: the same estimate wherever the window lies', async () => {
    const path = join(host.cwd, 'big-multibyte.txt')
    const handle = await open(path, 'w')
    const lines: string[] = []
    for (let i = 0; i < 20_000; i++) lines.push(`${i} ${'é漢😀'.repeat(i % 9)}${'x'.repeat(i % 13)}\r\n`)
    const block = Buffer.from(lines.join(''))
    let written = 0
    while (written <= 65 * 1024 * 1024) written += (await handle.write(block)).bytesWritten
    await handle.close()
    const total = 20_000 * Math.ceil(written / block.length)
    const totals: (number | boolean)[] = []
    for (const offset of [1, 123_457, total - 30, total - 10, total + 5]) {
      const { fast, provider } = await both('big-multibyte.txt', { offset, limit: 20, maxLineLength: 2000, maxBytes: 102400 })
      expect(fast).toEqual(provider)
      if (!('value' in fast)) throw new Error(fast.error)
      totals.push(fast.value.total_exact || fast.value.total_lines)
    }
    // Estimates for windows that end before the last line, the exact total once the scan reaches the end.
    expect(totals.slice(0, 3).every((value) => typeof value === 'number')).toBe(true)
    expect(totals.slice(3)).toEqual([true, true])
  })

  it('the fast path serves this provider, and the whole tool reads the same as with the other one', async () => {
    const target = await host.ctx.fs.resolve(host.cwd)
    expect(localPath(host.ctx, target)).toBe(host.cwd)
    const other = await readHost({}, host.ctx.fs.sandboxMode === undefined ? { sandbox: 'workspace-write' } : {})
    try {
      const content = Array.from({ length: 3000 }, (_, i) => `l${i} ${'é'.repeat(i % 7)}`).join('\n')
      await writeFile(join(host.cwd, 'same.txt'), content)
      await writeFile(join(other.cwd, 'same.txt'), content)
      for (const args of [{}, { offset: 2990 }, { offset: 10, limit: 4 }]) {
        const a = await execTool(host.ctx, 'read_file', { file_path: 'same.txt', ...args })
        const b = await execTool(other.ctx, 'read_file', { file_path: 'same.txt', ...args })
        expect(textOf(b)).toBe(textOf(a))
      }
    } finally {
      await other.dispose()
    }
  })
})

describeOnBoth('near-name suggestions: fast path = provider path', () => {
  /** The not-found message for `dir/wanted` through one path or the other. */
  async function lookup(dir: string, wanted: string, fastPath: boolean): Promise<string> {
    const target = await host.ctx.fs.resolve(join(dir, wanted))
    const exec = { signal: new AbortController().signal } as ToolExecution
    return statRegular(host.ctx, exec, target, 'list_directory', { fastPath })
      .then(() => 'found', (error: Error) => `${error.constructor.name}: ${error.message}`)
  }

  it('the same suggestions for every kind of entry, and the same fallback when a symlink cannot be resolved', async () => {
    const dir = join(host.cwd, 'names')
    await mkdir(join(dir, 'sub'), { recursive: true })
    for (const name of ['config.ts', 'config.js', 'Config.tsx', 'confit.ts', '.env', '.envrc', 'caf\u00e9.txt', 'cafe\u0301.txt', 'README.md', 'readme.txt', 'sub.ts']) {
      await writeFile(join(dir, name), 'x\n')
    }
    await symlink('config.ts', join(dir, 'config-link'))
    await symlink('missing-target', join(dir, 'dangling'))
    // Symlinks that fail the provider's listing: a loop, and a path through a file.
    const loopDir = join(host.cwd, 'loops')
    const fileDir = join(host.cwd, 'through')
    for (const [bad, link] of [[loopDir, 'bad-link'], [fileDir, 'config.ts/inner']] as const) {
      await mkdir(bad)
      for (const name of ['config.ts', 'config.js']) await writeFile(join(bad, name), 'x\n')
      await symlink(link, join(bad, 'bad-link'))
    }

    const wanted = ['config.txt', 'conf.ts', '.en', 'cafe.txt', 'caf\u00e9.md', 'dangling', 'readme.md', 'zzzzzzzz', 'sub', 'config-lnk']
    const outcomes: string[] = []
    for (const [where, names] of [[dir, wanted], [fileDir, ['config.txt']], [loopDir, ['config.txt']]] as const) {
      for (const name of names) {
        const fast = await lookup(where, name, true)
        expect(fast).toBe(await lookup(where, name, false))
        outcomes.push(fast)
      }
    }
    // The cases really differ from each other (the comparison is not between two empty answers).
    expect(outcomes[0]).toBe(`FsError: cannot read "${join(dir, 'config.txt')}": file not found. Did you mean: config.js, config.ts, Config.tsx?`)
    expect(outcomes[5]).toBe(`FsError: cannot read "${join(dir, 'dangling')}": file not found (dangling is a symbolic link whose target does not exist)`)
    // A failing symlink fails the provider's listing: no suggestions on either path.
    expect(outcomes.at(-2)).toBe(`FsError: cannot read "${join(fileDir, 'config.txt')}": file not found`)
    expect(outcomes.at(-1)).toBe(`FsError: cannot read "${join(loopDir, 'config.txt')}": file not found`)
    expect(localPath(host.ctx, await host.ctx.fs.resolve(dir))).toBe(dir)
  })
})
