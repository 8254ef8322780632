import { writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import fc from 'fast-check'
import iconv from 'iconv-lite'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as Read from '../../tool-read/src/index.ts'
import { escapeName } from '@gencode-ai/dsh-tool-common'
import { argsFor, nastyNumber, nastyString, sometimes } from '../src/arbitraries.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { makeFixture } from '../src/fixture.ts'

// A 1x1 PNG, a notebook, a binary file, UTF-16, GBK and UTF-32 text and a PDF beside the shared fixture.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
const NOTEBOOK = JSON.stringify({ metadata: { language_info: { name: 'python' } }, cells: [{ cell_type: 'code', source: ['print(1)'], execution_count: 1, outputs: [] }] })

let host: Host
beforeAll(async () => {
  host = await bootHost()
  await host.ctx.plugin(Read, {})
  await makeFixture(host.cwd)
  await writeFile(join(host.cwd, 'pic.png'), PNG)
  await writeFile(join(host.cwd, 'broken.png'), 'not a png')
  await writeFile(join(host.cwd, 'nb.ipynb'), NOTEBOOK)
  await writeFile(join(host.cwd, 'bad.ipynb'), '{"cells": 3')
  await writeFile(join(host.cwd, 'bin.dat'), Buffer.from([1, 2, 0, 3, 255]))
  await writeFile(join(host.cwd, 'utf16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\nb\n', 'utf16le')]))
  await writeFile(join(host.cwd, 'lines.txt'), Array.from({ length: 300 }, (_, i) => `line ${i + 1}`).join('\n'))
  await writeFile(join(host.cwd, 'gbk.txt'), iconv.encode(Array.from({ length: 300 }, (_, i) => `第${i + 1}行 中文`).join('\r\n'), 'gbk'))
  await writeFile(join(host.cwd, 'utf32.txt'), iconv.encode('a\nb\n', 'utf-32le', { addBOM: true }))
  await writeFile(join(host.cwd, 'doc.pdf'), await pdf(12))
  await writeFile(join(host.cwd, 'bad.pdf'), '%PDF-1.7\nbroken\n')
})
afterAll(async () => { await host.dispose() })

const PARAMS = ['file_path', 'offset', 'limit', 'encoding', 'pages']

async function pdf(count: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let n = 1; n <= count; n++) doc.addPage([100, 100]).drawText(`p${n}`, { x: 10, y: 50, font, size: 10 })
  return await doc.save()
}

const readArgs = argsFor({
  file_path: sometimes(fc.constantFrom(
    'README.md', 'src/index.ts', 'src/cli/ui.ts', 'dossier é/文件.txt', 'no-newline.txt', 'empty.txt', '.env', 'lines.txt',
    'pic.png', 'broken.png', 'nb.ipynb', 'bad.ipynb', 'bin.dat', 'utf16.txt', 'link-in/index.ts', 'link-out/hostname',
    'dangling', 'src', 'READNE.md', 'nope/x.txt', '/etc/hostname', '/dev/null', '/proc/self/status',
    'gbk.txt', 'utf32.txt', 'doc.pdf', 'bad.pdf',
  ), nastyString),
  offset: sometimes(fc.integer({ min: 1, max: 400 }), nastyNumber),
  limit: sometimes(fc.integer({ min: 1, max: 400 }), nastyNumber),
  encoding: sometimes(fc.constantFrom('gbk', 'big5', 'utf-8', 'latin1', 'utf-16le', 'shift_jis', 'klingon', '', null), nastyString),
  pages: sometimes(fc.constantFrom('1', '2-5', '1,3-4', '12', '0', '13', '5-2', '1-30', '', null), nastyString),
}, ['file_path'])

it('read_file: generated arguments never throw past the pipeline, hang, or give an error that names nothing', async () => {
  const tally = { calls: 0, ok: 0, errors: 0 }
  await fc.assert(fc.asyncProperty(readArgs, async (args) => {
    const result = await withinMs(20_000, `read_file ${JSON.stringify(args)?.slice(0, 200)}`, execTool(host.ctx, 'read_file', args))
    tally.calls++
    const text = textOf(result)
    if (!result.isError) {
      tally.ok++
      expect(text.length).toBeGreaterThan(0)
      return
    }
    tally.errors++
    if (process.env.FUZZ_SHOW === '1') console.log(text.slice(0, 160))
    expect(text.startsWith('Error: ')).toBe(true)
    const path = (args as { file_path?: unknown } | null)?.file_path
    const tail = typeof path === 'string' ? path.replace(/\/+$/, '').split('/').pop() ?? '' : ''
    // The value, as given or as resolved (`.` is reported as the workspace's absolute path).
    const resolved = typeof path === 'string' && !path.includes('\0') ? resolve(host.cwd, path) : ''
    // Echoed paths are escaped (controls as \xNN …): the value may appear in that form.
    const named = (value: string, chars: number) => value !== '' && [value, escapeName(value)].some((form) => text.includes(form.slice(0, chars)))
    const namesSomething = PARAMS.some((param) => text.includes(param))
      || named(tail, 20)
      || named(resolved, 200)
      || text.includes('outside the workspace')
      || text.includes('invalid arguments')
      || text.includes('must be losslessly JSON-serializable')
    expect(namesSomething, text).toBe(true)
  }), { numRuns: runs(10_000, 1_000) })
  console.log(`read_file fuzz: ${tally.calls} calls, ${tally.ok} results, ${tally.errors} clear errors`)
  expect(tally.calls).toBe(runs(10_000, 1_000))
}, LONG_TEST_MS)
