/**
 * read_file on text that lies about itself, on real files: UTF-8 with a bad byte (with and without
 * a BOM, and with `encoding=utf-8`), a blob of one repeated byte, bytes that are mostly controls,
 * NULs past the first 8 KiB inside and outside the shown window, CR-only line endings (a progress
 * bar's log), and a 100 GiB sparse file read past its text. Each answer must be true, and each call
 * settle within a bound; a host reading a large legacy-encoded file answers SIGTERM at once. Each
 * runs on the product's dsh-fs-sandbox and on the bare dsh-fs-local.
 */
import { spawn } from 'node:child_process'
import { open, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as Read from '../../tool-read/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { COMPOSITIONS } from '../src/fixture.ts'

const BOUND = 20_000

for (const [provider, composition] of COMPOSITIONS) {
  describe(`text that lies about itself (${provider})`, () => {
    let host: Host
    beforeAll(async () => {
      host = await bootHost(composition)
      await host.ctx.plugin(Read, {})
    })
    afterAll(async () => { await host.dispose() })

    async function read(name: string, content: Buffer | undefined, args: Record<string, unknown> = {}) {
      if (content !== undefined) await writeFile(join(host.cwd, name), content)
      const result = await withinMs(BOUND, `read_file ${name}`, execTool(host.ctx, 'read_file', { file_path: name, ...args }))
      return { text: textOf(result), value: result.isError ? undefined : result.value as Record<string, unknown> }
    }

    it('one bad byte in UTF-8: U+FFFD and a note naming its line, not "binary"; encoding=utf-8 gives the same', async () => {
      const content = Buffer.concat([Buffer.from('第一行 ünïcödé\nzweite Zeile\n'), Buffer.from([0xff]), Buffer.from(' dritte\n')])
      const expected = '1\t第一行 ünïcödé\n2\tzweite Zeile\n3\t\uFFFD dritte\n\n(Bytes that are not UTF-8 are shown as \uFFFD, the first on line 3; edit/write would not keep them.)'
      expect((await read('bad.txt', content)).text).toBe(expected)
      expect((await read('bad.txt', undefined, { encoding: 'utf-8' })).text).toBe(expected)
    })

    it('a UTF-8 BOM and a few bad bytes: UTF-8, the BOM never shown (not windows-1252\'s ï»¿)', async () => {
      const content = Buffer.concat([Buffer.from('\uFEFFname,city\nJosé,Zürich\n'), Buffer.from([0xe9, 0x0a, 0x80, 0x0a])])
      const { text, value } = await read('bom-bad.csv', content)
      expect(text).not.toContain('ï»¿')
      expect(value).toMatchObject({ encoding: 'utf-8', lines: ['name,city', 'José,Zürich', '\uFFFD', '\uFFFD'], first_invalid_line: 3 })
    })

    it('128 bytes of 0x80, and bytes that are mostly controls, are binary (no encoding claims them)', async () => {
      expect((await read('euros.bin', Buffer.alloc(128, 0x80))).text).toMatch(/^Error: cannot read ".*euros\.bin": binary file/)
      // Control bytes and high bytes from a fixed pseudo-random sequence, no NUL (which alone would say binary).
      let seed = 7
      const noise = Buffer.from(Array.from({ length: 4096 }, () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31
        return 1 + (seed >> 8) % 31 + ((seed >> 20) % 2 === 0 ? 0x80 : 0)
      }))
      expect((await read('noise.bin', noise)).text).toMatch(/^Error: cannot read ".*noise\.bin": binary file/)
    })

    it('a NUL past the first 8 KiB: binary when the window shows its line, text when it does not', async () => {
      const lines = Array.from({ length: 1000 }, (_, i) => `line ${i + 1} of ordinary text`)
      lines[899] = 'a NUL\0here'
      const content = Buffer.from(`${lines.join('\n')}\n`)
      expect((await read('nul.txt', content)).text).toMatch(/^Error: cannot read ".*nul\.txt": binary file \(a NUL byte on line 900\)/)
      expect((await read('nul.txt', undefined, { offset: 1, limit: 10 })).value).toMatchObject({ lines: lines.slice(0, 10), total_lines: 1000 })
    })

    it('a lone CR ends a line: the last state of a progress bar is reachable by offset', async () => {
      const bar = Array.from({ length: 400 }, (_, i) => `Downloading ${'#'.repeat(i % 40)} ${(i / 4).toFixed(1)}%`).join('\r')
      const content = Buffer.from(`start\n${bar}\rDownload complete\n`)
      const first = await read('progress.log', content, { limit: 3 })
      expect(first.value).toMatchObject({ lines: ['start', 'Downloading  0.0%', 'Downloading # 0.3%'], total_lines: 402 })
      expect((await read('progress.log', undefined, { offset: 402 })).text).toBe('402\tDownload complete')
      // Classic Mac endings, and CRLF mixed in, count alike.
      expect((await read('mac.txt', Buffer.from('one\rtwo\r\nthree\r'))).value).toMatchObject({ lines: ['one', 'two', 'three'], total_lines: 3 })
    })

    it('a 100 GiB sparse file read past its text stops at the hole as binary, within seconds', async () => {
      const path = join(host.cwd, 'sparse.txt')
      await writeFile(path, 'a line of text\n'.repeat(20_000))
      await truncate(path, 100 * 1024 ** 3)
      const { text } = await read('sparse.txt', undefined, { offset: 50_000 })
      expect(text).toMatch(/^Error: cannot read ".*sparse\.txt": binary file \(64 KiB of NUL bytes in a row, as in a sparse file's hole\)/)
      // A window inside the text is still served (the total, for a file this size, an estimate).
      expect((await read('sparse.txt', undefined, { offset: 10, limit: 2 })).value).toMatchObject({ lines: ['a line of text', 'a line of text'], total_exact: false })
    })

    it('a host in the middle of reading 128 MiB of windows-1251 (detection, then a scan) answers SIGTERM at once', async () => {
      const path = join(host.cwd, 'big-1251.txt')
      const block = iconv.encode('В гимназии он не был первым учеником, но учителя его любили за живой ум.\n'.repeat(14_000), 'windows-1251')
      const handle = await open(path, 'w')
      for (let written = 0; written < 128 * 1024 * 1024; written += block.length) await handle.write(block)
      await handle.close()
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../fixtures/read-loop.ts'), host.cwd, path, '1500000', provider === 'dsh-fs-sandbox' ? 'sandbox' : 'local'], {
        cwd: join(import.meta.dirname, '..'),
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      await withinMs(60_000, 'the reading host to boot', new Promise<void>((resolve) => child.stdout.on('data', (data: Buffer) => {
        if (String(data).includes('reading')) resolve()
      })))
      // The reads loop: one is running now (a scan of 128 MiB takes far longer than this).
      await new Promise((resolve) => setTimeout(resolve, 300))
      child.kill('SIGTERM')
      // Generous on a loaded machine; a scan that kept the event loop would hold the handler for seconds.
      expect(await withinMs(2_000, 'the host to answer SIGTERM', exited)).toBe(143)
    }, 120_000)
  })
}
