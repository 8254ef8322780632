import { writeFile, mkdir, open } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

async function read(path: string, args: Record<string, unknown> = {}, on: Host = host) {
  return execTool(on.ctx, 'read_file', { file_path: path, ...args })
}

function numbered(count: number, from = 1): string {
  return Array.from({ length: count }, (_, i) => `line ${from + i}`).join('\n')
}

describe('text reads: the exact model text', () => {
  it('short file: cat -n rows, number width of the last line, no footer', async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `row ${i + 1}`)
    await writeFile(join(host.cwd, 'short.txt'), `${lines.join('\n')}\n`)
    const result = await read('short.txt')
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe(lines.map((line, i) => `${String(i + 1).padStart(2)}\t${line}`).join('\n'))
  })

  it('the canonical value carries the window, the exact total and the encoding', async () => {
    await writeFile(join(host.cwd, 'value.txt'), 'a\r\nb\r\n')
    const result = await read('value.txt')
    expect(result.isError).toBe(false)
    expect(result.isError ? undefined : result.value).toEqual({
      kind: 'text',
      path: join(host.cwd, 'value.txt'),
      start_line: 1,
      lines: ['a', 'b'],
      total_lines: 2,
      total_exact: true,
      cut_lines: 0,
      byte_capped: false,
      encoding: 'utf-8',
    })
  })

  it('long file: the default limit (maxEntries) and the first-party continuation footer', async () => {
    await writeFile(join(host.cwd, 'long.txt'), numbered(2500))
    const text = textOf(await read('long.txt'))
    const rows = text.split('\n')
    expect(rows[0]).toBe('   1\tline 1')
    expect(rows[1999]).toBe('2000\tline 2000')
    expect(rows.slice(2000)).toEqual(['', '(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)'])
    // Following the hint literally gives the rest, with no footer at the end of the file.
    const rest = textOf(await read('long.txt', { offset: 2001 }))
    expect(rest.split('\n')).toHaveLength(500)
    expect(rest.split('\n')[499]).toBe('2500\tline 2500')
  })

  it('offset and limit pick a window; width follows the file, not the window', async () => {
    await writeFile(join(host.cwd, 'window.txt'), numbered(150))
    expect(textOf(await read('window.txt', { offset: 8, limit: 3 }))).toBe(
      '  8\tline 8\n  9\tline 9\n 10\tline 10\n\n(Showing lines 8-10 of 150. Use offset=11 to continue.)',
    )
  })

  it('a limit above maxEntries is served up to maxEntries', async () => {
    const small = await readHost({ maxEntries: 3 })
    try {
      await writeFile(join(small.cwd, 'f.txt'), numbered(5))
      expect(textOf(await read('f.txt', { limit: 50 }, small))).toBe(
        '1\tline 1\n2\tline 2\n3\tline 3\n\n(Showing lines 1-3 of 5. Use offset=4 to continue.)',
      )
    } finally {
      await small.dispose()
    }
  })

  it('a line over maxLineLength is cut with a visible marker', async () => {
    await writeFile(join(host.cwd, 'wide.txt'), `short\n${'x'.repeat(2500)}\nend\n`)
    const result = await read('wide.txt')
    expect(textOf(result)).toBe(`1\tshort\n2\t${'x'.repeat(2000)}... (line truncated to 2000 chars)\n3\tend`)
    expect(result.isError ? 0 : (result.value as { cut_lines: number }).cut_lines).toBe(1)
  })

  it('the byte budget counts rendered rows, cuts at a line boundary and still gives the continuation', async () => {
    const line = 'y'.repeat(99)
    await writeFile(join(host.cwd, 'budget.txt'), Array.from({ length: 3000 }, () => line).join('\n'))
    const result = await read('budget.txt')
    expect(result.isError).toBe(false)
    const text = textOf(result)
    // A row is the number padded to 4, a TAB, 99 bytes and a newline: 105 bytes; 975 fit in 102400.
    const rows = text.split('\n')
    expect(rows[974]).toBe(` 975\t${line}`)
    expect(rows.slice(975)).toEqual(['', '(Showing lines 1-975 of 3000. Use offset=976 to continue.)'])
    expect((result.isError ? undefined : result.value as { byte_capped: boolean })?.byte_capped).toBe(true)
    // The rendered rows respect maxBytes; only the footer goes beyond it.
    const body = text.slice(0, text.indexOf('\n\n(Showing'))
    expect(Buffer.byteLength(`${body}\n`)).toBeLessThanOrEqual(102400)
    expect(Buffer.byteLength(`${body}\n`) + 105).toBeGreaterThan(102400)
  })

  it('the budget counts the padding of short line numbers', async () => {
    const small = await readHost({ maxBytes: 1024 })
    try {
      // 150 lines of 20 bytes: numbers padded to 3 digits, rows of 25 bytes, 40 rows in 1024.
      await writeFile(join(small.cwd, 'pad.txt'), Array.from({ length: 150 }, () => 'p'.repeat(20)).join('\n'))
      const text = textOf(await read('pad.txt', {}, small))
      const body = text.slice(0, text.indexOf('\n\n(Showing'))
      expect(body.split('\n')).toHaveLength(40)
      expect(body.split('\n')[0]).toBe(`  1\t${'p'.repeat(20)}`)
      expect(Buffer.byteLength(`${body}\n`)).toBeLessThanOrEqual(1024)
      expect(text.endsWith('(Showing lines 1-40 of 150. Use offset=41 to continue.)')).toBe(true)
    } finally {
      await small.dispose()
    }
  })

  it('a single line larger than the budget is still returned (paging never stalls)', async () => {
    const tiny = await readHost({ maxBytes: 1024, maxLineLength: 5000 })
    try {
      await writeFile(join(tiny.cwd, 'big-line.txt'), `${'z'.repeat(3000)}\nnext\n`)
      expect(textOf(await read('big-line.txt', {}, tiny))).toBe(`1\t${'z'.repeat(3000)}\n\n(Showing lines 1-1 of 2. Use offset=2 to continue.)`)
    } finally {
      await tiny.dispose()
    }
  })

  it('past the end of a one-line file says "1 line"', async () => {
    await writeFile(join(host.cwd, 'one.txt'), 'only\n')
    expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'one.txt', offset: 5 })))
      .toBe('(Offset 5 is past the end: the file has 1 line. Use offset=1 to read its last line.)')
  })

  it('past the end is a value, not an error', async () => {
    await writeFile(join(host.cwd, 'three.txt'), 'a\nb\nc\n')
    const result = await read('three.txt', { offset: 10 })
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe('(Offset 10 is past the end: the file has 3 lines. Use offset=3 to read its last line.)')
  })

  it('an empty file', async () => {
    await writeFile(join(host.cwd, 'empty.txt'), '')
    expect(textOf(await read('empty.txt'))).toBe('(File is empty.)')
  })

  it('a UTF-8 BOM is stripped; CRLF endings are dropped; a last line without newline counts', async () => {
    await writeFile(join(host.cwd, 'bom.txt'), '\uFEFFfirst\r\nsecond')
    expect(textOf(await read('bom.txt'))).toBe('1\tfirst\n2\tsecond')
  })

  it('a lone CR ends a line, also as the last byte of a 64 KiB chunk; a CRLF split by the chunk edge is one ending', async () => {
    const chunk = 64 * 1024
    await writeFile(join(host.cwd, 'cr-edge.txt'), Buffer.concat([Buffer.alloc(chunk - 1, 'a'), Buffer.from('\rnext\rlast\r')]))
    const lone = await read('cr-edge.txt', { offset: 2 })
    expect(lone.isError ? undefined : lone.value).toMatchObject({ lines: ['next', 'last'], total_lines: 3 })
    await writeFile(join(host.cwd, 'crlf-edge.txt'), Buffer.concat([Buffer.alloc(chunk - 1, 'a'), Buffer.from('\r\nb\r\n')]))
    const split = await read('crlf-edge.txt', { offset: 2 })
    expect(split.isError ? undefined : split.value).toMatchObject({ lines: ['b'], total_lines: 2 })
    // In a legacy encoding and in UTF-16 alike.
    await writeFile(join(host.cwd, 'cr16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('one\rtwo\r\nthree', 'utf16le')]))
    const utf16 = await read('cr16.txt')
    expect(utf16.isError ? undefined : utf16.value).toMatchObject({ lines: ['one', 'two', 'three'] })
    await writeFile(join(host.cwd, 'cr-latin.txt'), Buffer.from('caf\xe9\rth\xe9\r', 'latin1'))
    const latin = await read('cr-latin.txt', { encoding: 'latin1' })
    expect(latin.isError ? undefined : latin.value).toMatchObject({ lines: ['café', 'thé'], total_lines: 2 })
  })

  it('UTF-16 LE and BE with a BOM are decoded', async () => {
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\nwörld\n', 'utf16le')])
    const be = Buffer.from(le)
    be.swap16()
    await writeFile(join(host.cwd, 'le.txt'), le)
    await writeFile(join(host.cwd, 'be.txt'), be)
    const result = await read('le.txt')
    expect(textOf(result)).toBe('1\théllo\n2\twörld')
    expect((result.isError ? undefined : result.value as { encoding: string })?.encoding).toBe('utf-16le')
    expect(textOf(await read('be.txt'))).toBe('1\théllo\n2\twörld')
  })

  it('SVG is read as text', async () => {
    await writeFile(join(host.cwd, 'icon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>\n')
    expect(textOf(await read('icon.svg'))).toBe('1\t<svg xmlns="http://www.w3.org/2000/svg"/>')
  })

  it('relative paths resolve against the calling session cwd', async () => {
    const other = await makeTmpDir()
    try {
      await mkdir(join(other, 'sub'))
      await writeFile(join(other, 'sub', 'here.txt'), 'session file\n')
      const agent = host.agent(other)
      const result = await execTool(host.ctx, 'read_file', { file_path: 'sub/here.txt' }, { agent })
      expect(textOf(result)).toBe('1\tsession file')
    } finally {
      await removeTmpDir(other)
    }
  })
})

describe('large files', () => {
  it('beyond 64 MiB the total is an estimate, said as such; near the end it is exact', async () => {
    const path = join(host.cwd, 'huge.txt')
    const handle = await open(path, 'w')
    const block = Buffer.from(Array.from({ length: 100_000 }, (_, i) => `row ${String(i).padStart(7, '0')}`).join('\n') + '\n')
    // 12 bytes per line: 100k lines per block, 60 blocks = 72 MB, 6,000,000 lines.
    for (let i = 0; i < 60; i++) await handle.write(block)
    await handle.close()
    const head = textOf(await read('huge.txt', { limit: 2 }))
    expect(head).toBe('1\trow 0000000\n2\trow 0000001\n\n(Showing lines 1-2 of about 6000000 (estimated from the file size). Use offset=3 to continue.)')
    const tail = textOf(await read('huge.txt', { offset: 5_999_999 }))
    expect(tail).toBe('5999999\trow 0099998\n6000000\trow 0099999')
  })
})
