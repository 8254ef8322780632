/**
 * PDFs, generated here with pdf-lib: text per page, `pages`, the default and the cap, the footer
 * with the literal next value, pages without a text layer, and the errors.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { makePdf, readHost } from './harness.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

const page = (n: number) => `--- Page ${n} ---\nPage ${n} text\nsecond line`

async function read(name: string, bytes: Uint8Array | string, args: Record<string, unknown> = {}) {
  await writeFile(join(host.cwd, name), bytes)
  const result = await execTool(host.ctx, 'read_file', { file_path: name, ...args })
  return { text: textOf(result), value: result.isError ? undefined : result.value }
}

describe('PDF text by page', () => {
  it('a short PDF: every page, a note for the page without a text layer, no footer', async () => {
    const { text, value } = await read('doc.pdf', await makePdf(3, [2]))
    expect(text).toBe(`${page(1)}\n\n--- Page 2 ---\n(No text layer on this page: it may be a scanned image.)\n\n${page(3)}`)
    expect(value).toEqual({
      kind: 'pdf',
      path: join(host.cwd, 'doc.pdf'),
      pages_total: 3,
      pages: [{ number: 1, text: 'Page 1 text\nsecond line' }, { number: 2, text: '' }, { number: 3, text: 'Page 3 text\nsecond line' }],
    })
  })

  it('by default the first 10 pages, and the footer names the next pages literally, clipped to the count', async () => {
    const pdf = await makePdf(25)
    const first = await read('long.pdf', pdf)
    expect(first.text).toBe(`${Array.from({ length: 10 }, (_, i) => page(i + 1)).join('\n\n')}\n\n(Showing pages 1-10 of 25. Use pages="11-20" to continue.)`)
    const second = await read('long.pdf', pdf, { pages: '11-20' })
    expect(second.text.endsWith('(Showing pages 11-20 of 25. Use pages="21-25" to continue.)')).toBe(true)
    const last = await read('long.pdf', pdf, { pages: '21-25' })
    expect(last.text).toBe(Array.from({ length: 5 }, (_, i) => page(21 + i)).join('\n\n'))
  })

  it('pages lists and ranges: "3", "2,4-6"; at most 20 a call, the rest in the footer', async () => {
    const pdf = await makePdf(30)
    expect((await read('p.pdf', pdf, { pages: '3' })).text).toBe(`${page(3)}\n\n(Showing pages 3 of 30. Use pages="4" to continue.)`)
    const list = await read('p.pdf', pdf, { pages: ' 2, 4-6 ' })
    expect((list.value as { pages: { number: number }[] }).pages.map((entry) => entry.number)).toEqual([2, 4, 5, 6])
    expect(list.text.endsWith('(Showing pages 2,4-6 of 30. Use pages="7-10" to continue.)')).toBe(true)
    const many = await read('p.pdf', pdf, { pages: '1-25' })
    expect((many.value as { pages: unknown[] }).pages).toHaveLength(20)
    expect(many.text.endsWith('(Showing pages 1-20 of 30. Use pages="21-25" to continue.)')).toBe(true)
  })

  it('recognised by content whatever the name', async () => {
    const { text } = await read('paper.txt', await makePdf(1))
    expect(text).toBe(page(1))
  })
})

describe('PDF errors', () => {
  it('pages out of range, or malformed, names pages and the valid range', async () => {
    const pdf = await makePdf(5)
    const file = JSON.stringify(join(host.cwd, 'r.pdf'))
    expect((await read('r.pdf', pdf, { pages: '6' })).text).toBe(`Error: pages "6" is out of range: ${file} has 5 pages (1-5)`)
    expect((await read('r.pdf', pdf, { pages: '4-2' })).text).toBe(`Error: pages "4-2" is out of range: ${file} has 5 pages (1-5)`)
    expect((await read('r.pdf', pdf, { pages: 'first' })).text).toBe('Error: pages must be like "3", "1-5" or "2,4-6" (got "first")')
  })

  it('pages on a file that is not a PDF', async () => {
    expect((await read('notes.txt', 'a\n', { pages: '1' })).text)
      .toBe(`Error: pages applies to PDF files; "${join(host.cwd, 'notes.txt')}" is text — omit pages, and use offset/limit for lines`)
  })

  it('a corrupt PDF and an encrypted one are clear errors', async () => {
    expect((await read('bad.pdf', '%PDF-1.7\nnot really a pdf\n')).text)
      .toBe(`Error: cannot read "${join(host.cwd, 'bad.pdf')}": corrupt PDF (Invalid PDF structure.) — regenerate it, or read another file`)
    // A password-protected PDF: a standard security handler whose user password is not empty.
    const plain = Buffer.from(await makePdf(1)).toString('latin1')
    const id = '<00112233445566778899aabbccddeeff>'
    const encrypted = plain.replace(/trailer\s*<</u, `trailer\n<< /Encrypt << /Filter /Standard /V 1 /R 2 /O <${'ab'.repeat(32)}> /U <${'cd'.repeat(32)}> /P -4 >> /ID [${id} ${id}]`)
    expect(encrypted).not.toBe(plain)
    expect((await read('locked.pdf', Buffer.from(encrypted, 'latin1'))).text)
      .toBe(`Error: cannot read "${join(host.cwd, 'locked.pdf')}": the PDF is encrypted with a password — decrypt it (e.g. qpdf --decrypt) and read the copy`)
  })
})
