/**
 * Bytes that used to mislead read_file: NULs read as UTF-16 (`Hello\0world`), one ISO-2022-JP escape in UTF-8, Johab
 * symbols and Hanja (now from a table built once, checked against EUC-KR cell by cell), and notebook plots that fail to
 * attach (now spending the call's image budget).
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { JohabDecoder } from '../src/formats/text/johab.ts'
import { readHost } from './harness.ts'

let host: Host
let home: string
beforeAll(async () => {
  host = await readHost({}, { imageInput: true })
  home = await makeTmpDir('dsh-home-')
  await host.ctx.plugin(LocalAttachmentStore, { dshHome: home, maxImagesPerMessage: 2 })
})
afterAll(async () => {
  await host.dispose()
  await removeTmpDir(home)
})

async function read(name: string, content: Buffer | string) {
  await writeFile(join(host.cwd, name), content)
  const result = await execTool(host.ctx, 'read_file', { file_path: name }, { agent: host.agent() })
  return { text: textOf(result), isError: result.isError, value: result.value as Record<string, unknown> | undefined }
}

describe('bytes that mislead', () => {
  it('Hello\\0world is binary, not UTF-16; real UTF-16 without a BOM still reads', async () => {
    expect((await read('hello.txt', 'Hello\0world')).text).toMatch(/^Error: cannot read ".*hello\.txt": binary file/u)
    expect((await read('u16.txt', iconv.encode('plain text\nline two\n', 'utf-16be'))).value).toMatchObject({ encoding: 'utf-16be', lines: ['plain text', 'line two'] })
  })

  it('UTF-8 with one ESC $ B stays UTF-8', async () => {
    const line = 'café naïve 日本語 \x1b$B'
    expect((await read('esc.txt', `${line}\n`)).value).toMatchObject({ encoding: 'utf-8', lines: [line] })
  })

  it('every Johab symbol and Hanja decodes as its KS X 1001 cell does in EUC-KR', () => {
    for (let row = 0xa1; row <= 0xfd; row++) {
      if (row > 0xac && row < 0xca) continue // Hangul rows: Johab spells those by their jamo
      for (let cell = 0; cell < 94; cell++) {
        const lead = row >= 0xca ? 0xe0 + ((row - 0xca) >> 1) : 0xd9 + ((row - 0xa1) >> 1)
        const at = ((row - (row >= 0xca ? 0xca : 0xa1)) & 1) * 94 + cell
        const bytes = Buffer.from([lead, at < 78 ? 0x31 + at : 0x91 + at - 78])
        expect({ row, cell, text: new JohabDecoder().write(bytes) }).toEqual({ row, cell, text: iconv.decode(Buffer.from([row, 0xa1 + cell]), 'euc-kr') })
      }
    }
  })

  it('notebook plots that fail to attach spend the image budget: the rest are not decoded', async () => {
    // A PNG signature and a header claiming 16383 × 16383 px, then nothing: every decode fails.
    const header = Buffer.alloc(25)
    header.writeUInt32BE(13, 0)
    header.write('IHDR', 4, 'latin1')
    header.writeUInt32BE(16383, 8)
    header.writeUInt32BE(16383, 12)
    header.set([8, 0, 0, 0, 0], 16)
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), header]).toString('base64')
    const cells = Array.from({ length: 5 }, (_, index) => ({
      cell_type: 'code', execution_count: index + 1, metadata: {}, source: `plot(${index})`,
      outputs: [{ output_type: 'display_data', metadata: {}, data: { 'image/png': png } }],
    }))
    const { text } = await read('broken.ipynb', JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: {}, cells }))
    expect(text.match(/\[Image output: not attached \(corrupt PNG image/gu)).toHaveLength(2)
    expect(text.match(/\[Image output: not attached, this call's image budget is spent; read offset=\d to see it\]/gu)).toHaveLength(3)
  })
})
