/**
 * PDFs as pdftotext reads them, on files written here by hand: CID fonts that need pdf.js's
 * predefined CMaps (GB, GBK, Shift-JIS, vertical, Identity-H over Adobe-Japan1), a header after
 * junk or none at all (and text files that only mention `%PDF-`), pdf.js failures in our error
 * shape, and encryption that covers attachments alone.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'
import { assemble, cidPdf, helveticaPdf } from './pdf-fixtures.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

async function read(name: string, bytes: Uint8Array | string, args: Record<string, unknown> = {}) {
  await writeFile(join(host.cwd, name), bytes)
  const result = await execTool(host.ctx, 'read_file', { file_path: name, ...args })
  const code = result.isError ? result.error.info?.code : undefined
  return { text: textOf(result), value: result.isError ? undefined : result.value, code }
}

const file = (name: string) => JSON.stringify(join(host.cwd, name))

describe('CID fonts through pdf.js\'s CMaps (no embedded font)', () => {
  it.each([
    ['UniGB-UCS2-H', 'GB1', '6d458c08', '浅谈'],
    ['GBK-EUC-H', 'GB1', 'c7b3ccb8', '浅谈'],
    ['90ms-RKSJ-H', 'Japan1', '82a082a282a482a682a8', 'あいうえお'],
    ['90ms-RKSJ-V', 'Japan1', '82a082a282a482a682a8', 'あいうえお'],
    ['UniKS-UCS2-H', 'Korea1', 'd55cae00', '한글'],
  ])('%s (%s): the text, not "no text layer"', async (encoding, ordering, hex, text) => {
    const result = await read(`${encoding}.pdf`, cidPdf(encoding, ordering, hex))
    expect(result.text).toBe(`--- Page 1 ---\n${text}`)
  })

  it('Identity-H over Adobe-Japan1 without a ToUnicode map: the collection\'s Unicode map gives the text', async () => {
    // CIDs 1-95 of Adobe-Japan1 are ASCII 0x20-0x7e: "Hi" is CIDs 41 and 74.
    const result = await read('identity.pdf', cidPdf('Identity-H', 'Japan1', '0029004a', 'CIDFontType2'))
    expect(result.text).toBe('--- Page 1 ---\nHi')
  })
})

describe('what counts as a PDF', () => {
  it('junk before the %PDF- header (within 1024 bytes): read as a PDF', async () => {
    const result = await read('junk.pdf', helveticaPdf('after junk', { header: `${'x'.repeat(900)}\n%PDF-1.4\n` }))
    expect(result.text).toBe('--- Page 1 ---\nafter junk')
  })

  it('no header, a binary comment line then objects: read as a PDF', async () => {
    const result = await read('headless.dat', helveticaPdf('no header', { header: '%\xe2\xe3\xcf\xd3\n' }))
    expect(result.text).toBe('--- Page 1 ---\nno header')
    // (An object at offset 0 is one pdf.js cannot place: the file opens with a line break here.)
    expect((await read('bare.dat', helveticaPdf('bare objects', { header: '\n' }))).text).toBe('--- Page 1 ---\nbare objects')
  })

  it('a text file that mentions %PDF- near its start, or opens like an object, is text', async () => {
    const notes = '# Notes\n\nEvery PDF opens with `%PDF-1.7` and ends with %%EOF.\n'
    expect((await read('notes.md', notes)).text).toBe('1\t# Notes\n2\t\n3\tEvery PDF opens with `%PDF-1.7` and ends with %%EOF.')
    expect((await read('obj.txt', '1 0 obj is how an object starts\n')).text).toBe('1\t1 0 obj is how an object starts')
    expect((await read('notes3.md', notes, { encoding: 'latin1' })).text).toBe('1\t# Notes\n2\t\n3\tEvery PDF opens with `%PDF-1.7` and ends with %%EOF.\n\n(Decoded from latin1. Edits must keep this encoding: edit/write would save UTF-8.)')
    expect((await read('notes2.md', notes, { pages: '1' })).text)
      .toBe(`Error: pages applies to PDF files; ${file('notes2.md')} is text — omit pages, and use offset/limit for lines`)
  })

  it('a header at the start that does not parse stays a corrupt PDF, not text', async () => {
    const result = await read('broken.pdf', '%PDF-1.7\nnot really a pdf\n')
    expect(result.text).toBe(`Error: cannot read ${file('broken.pdf')}: corrupt PDF (Invalid PDF structure.) — regenerate it, or read another file`)
    expect(result.code).toBe('FS_NOT_TEXT')
  })
})

describe('pdf.js failures in our shape', () => {
  it('a pages tree that contains itself: corrupt PDF naming the file and pdf.js\'s reason', async () => {
    const loop = assemble([
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [2 0 R] /Count 1 >>',
    ])
    const result = await read('loop.pdf', loop)
    expect(result.text).toBe(`Error: cannot read ${file('loop.pdf')}: corrupt PDF (Pages tree contains circular reference.) — regenerate it, or read another file`)
    expect(result.code).toBe('FS_NOT_TEXT')
  })
})

describe('encryption', () => {
  const id = '<00112233445566778899aabbccddeeff>'
  const standard = (streams: string) => `<< /Filter /Standard /V 5 /R 6 /Length 256 /P -4 /CF << /StdCF << /AuthEvent /EFOpen /CFM /AESV3 /Length 32 >> >> ${streams} /EFF /StdCF /O <${'ab'.repeat(48)}> /U <${'cd'.repeat(48)}> /OE <${'ef'.repeat(32)}> /UE <${'01'.repeat(32)}> /Perms <${'23'.repeat(16)}> >>`
  const encrypted = (streams: string) => assemble([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>',
    '<< /Length 41 >>\nstream\nBT /F1 24 Tf 50 700 Td (plain pages) Tj ET\nendstream',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    standard(streams),
  ], { trailer: ` /Encrypt 6 0 R /ID [${id} ${id}]` })

  it('only the attachments encrypted (streams and strings Identity): the pages read without a password', async () => {
    expect((await read('attach.pdf', encrypted('/StmF /Identity /StrF /Identity'))).text).toBe('--- Page 1 ---\nplain pages')
  })

  it('streams encrypted too: still refused as encrypted with a password', async () => {
    const result = await read('locked.pdf', encrypted('/StmF /StdCF /StrF /StdCF'))
    expect(result.text).toBe(`Error: cannot read ${file('locked.pdf')}: the PDF is encrypted with a password — decrypt it (e.g. qpdf --decrypt) and read the copy`)
    expect(result.code).toBe('FS_NOT_TEXT')
  })
})
