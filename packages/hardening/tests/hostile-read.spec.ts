import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { crc32, deflateSync } from 'node:zlib'
import iconv from 'iconv-lite'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import * as Read from '../../tool-read/src/index.ts'
import { COMPOSITIONS } from '../src/fixture.ts'
import { endsWithin } from '../src/blocking.ts'

/**
 * read_file on files crafted to mislead or hold it (issue 33 items 8, 9, 10; issue 31 item 3), on the product
 * composition and the bare dsh-fs-local: NULs that are not UTF-16, UTF-8 with one ISO-2022-JP escape, 20 MB of
 * Johab Hanja, and a notebook of 200 broken 16383² PNG plots.
 */
async function read(host: Host, name: string, bytes: Buffer | string, args: Record<string, unknown> = {}) {
  writeFileSync(join(host.cwd, name), bytes)
  const result = await execTool(host.ctx, 'read_file', { file_path: name, ...args }, { agent: host.agent() })
  return { text: textOf(result), isError: result.isError, value: result.isError ? undefined : result.value as Record<string, unknown> }
}

/** A PNG chunk: length, type, data, CRC. */
function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A 16383 × 16383 greyscale PNG whose pixel data stops after ~43 KB: its header is valid, its decode fails late. */
function brokenPng(): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(16383, 0)
  header.writeUInt32BE(16383, 4)
  header.set([8, 0, 0, 0, 0], 8) // 8-bit greyscale
  const rows = deflateSync(Buffer.alloc(16384 * 2800), { level: 9 })
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', rows), chunk('IEND', Buffer.alloc(0))])
}

/** Johab bytes of the KS X 1001 cell (`row` 0xa1-0xfe, `cell` 0-93), as EUC-KR bytes [row, 0xa1 + cell] say. */
function johab(row: number, cell: number): number[] {
  const lead = row >= 0xca ? 0xe0 + ((row - 0xca) >> 1) : 0xd9 + ((row - 0xa1) >> 1)
  const at = ((row - (row >= 0xca ? 0xca : 0xa1)) & 1) * 94 + cell
  return [lead, at < 78 ? 0x31 + at : 0x91 + at - 78]
}

for (const [provider, composition] of COMPOSITIONS) {
  describe(`files crafted to mislead or hold read_file (${provider})`, () => {
    let host: Host
    let home: string
    beforeAll(async () => {
      home = await makeTmpDir('dsh-home-')
      host = await bootHost({ ...composition, imageInput: true })
      await host.ctx.plugin(Read, {})
      await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(home)
    })

    it('NULs mean binary unless the bytes are UTF-16/32: Hello\\0world (11 bytes) and its 10-byte cut are binary', async () => {
      for (const bytes of ['Hello\0world', 'Hello\0worl', 'ab\0cd\0ef\0gh\0']) {
        const { text, isError } = await read(host, 'nul.txt', bytes)
        expect(isError, `${JSON.stringify(bytes)}: ${text}`).toBe(true)
        expect(text).toMatch(/binary file/u)
      }
      // The control: UTF-16LE and UTF-32BE without a BOM still read as text.
      const lines = ['plain text in UTF-16', 'a second line: ünïcödé', '日本語も']
      expect((await read(host, 'u16.txt', iconv.encode(`${lines.join('\n')}\n`, 'utf-16le'))).value).toMatchObject({ encoding: 'utf-16le', lines })
      expect((await read(host, 'u32.txt', iconv.encode(`${lines.join('\n')}\n`, 'utf-32be'))).value).toMatchObject({ encoding: 'utf-32be', lines })
    })

    it('UTF-8 holding one ESC $ B stays UTF-8 (and editable); ISO-2022-JP is still read by its escapes', async () => {
      const line = 'café naïve 日本語 \x1b$B then more'
      const { value } = await read(host, 'esc.txt', `${line}\nsecond\n`)
      expect(value).toMatchObject({ encoding: 'utf-8', lines: [line, 'second'] })
      // 7-bit, but not ISO-2022-JP after the escape (a space inside the two-byte run): UTF-8 too.
      expect((await read(host, 'esc7.txt', 'plain \x1b$B a b\n')).value).toMatchObject({ encoding: 'utf-8' })
      const japanese = 'これは日本語です。\n東京\n'
      const jis = Buffer.concat([Buffer.from('\x1b$B', 'latin1'), iconv.encode('これは日本語です。', 'euc-jp').map((byte) => byte & 0x7f),
        Buffer.from('\x1b(B\n\x1b$B', 'latin1'), iconv.encode('東京', 'euc-jp').map((byte) => byte & 0x7f), Buffer.from('\x1b(B\n', 'latin1')])
      expect((await read(host, 'jis.txt', jis)).value).toMatchObject({ encoding: 'ISO-2022-JP', lines: japanese.trimEnd().split('\n') })
    })

    it('20 MB of Johab Hanja and symbols: read to the end, every character from the table', async () => {
      const cells: [number, number][] = []
      const defined = (row: number, cell: number): boolean => !iconv.decode(Buffer.from([row, 0xa1 + cell]), 'euc-kr').includes('\uFFFD')
      for (let row = 0xa1; row <= 0xfd; row++) {
        if (row > 0xac && row < 0xca) continue
        let cell = (row * 7) % 94
        while (!defined(row, cell)) cell = (cell + 1) % 94
        cells.push([row, cell])
      }
      const bytes: number[] = []
      let expected = ''
      for (let index = 0; index < cells.length * 20; index++) { // 1,280 characters: under maxLineLength
        const [row, cell] = cells[index % cells.length]!
        bytes.push(...johab(row, cell))
        expected += iconv.decode(Buffer.from([row, 0xa1 + cell]), 'euc-kr')
      }
      const line = Buffer.from([...bytes, 0x0a])
      const count = Math.ceil(20 * 1024 * 1024 / line.length)
      writeFileSync(join(host.cwd, 'johab.txt'), Buffer.concat(Array.from({ length: count }, () => line)))
      const result = await endsWithin(10_000, 'reading 20 MB of Johab', execTool(host.ctx, 'read_file', { file_path: 'johab.txt', offset: count, encoding: 'johab' }))
      const value = result.value as { lines: string[], total_lines: number }
      expect(value.total_lines).toBe(count)
      expect(value.lines).toEqual([expected])
      expect(expected).not.toContain('\uFFFD')
    })

    it('a notebook of 200 broken 16383² PNG plots: failed attachments spend the image budget, the rest are not decoded', async () => {
      const png = brokenPng().toString('base64')
      const cells = Array.from({ length: 200 }, (_, index) => ({
        cell_type: 'code', execution_count: index + 1, metadata: {}, source: `plot(${index})`,
        outputs: [{ output_type: 'display_data', metadata: {}, data: { 'image/png': png, 'text/plain': '<Figure>' } }],
      }))
      const notebook = JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { language: 'python' } }, cells })
      const { text, isError } = await endsWithin(60_000, 'reading 200 broken plots', read(host, 'plots.ipynb', notebook, { limit: 200 }))
      expect(isError, text.slice(0, 300)).toBe(false)
      const tried = text.match(/\[Image output: not attached \(corrupt PNG image/gu) ?? []
      const spent = text.match(/\[Image output: not attached, this call's image budget is spent; read offset=\d+ to see it\]/gu) ?? []
      expect(tried).toHaveLength(20) // the store's images per message
      expect(spent).toHaveLength(180)
    }, 120_000)
  })
}
