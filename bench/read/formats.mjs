// read_file bench for other encodings and PDFs, on the product composition (dsh-sandbox-policy
// workspace-write + dsh-fs-sandbox), in one run:
//  - a window near the end of a 1 GiB GB18030 file against the same window of the same text in
//    UTF-8 (target <= 2x);
//  - pages 190-200 of a 200-page PDF against pages 1-10 (target <= 2x), with RSS growth.
// Usage: node --expose-gc bench/read/formats.mjs   (needs the built package: npx tsc -b packages/tool-read)
// READ_BENCH_BYTES sets the UTF-8 file's size (default 1 GiB).
import { mkdtempSync, openSync, writeSync, closeSync, rmSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { CallId } from '@deepseek-ai/dsh-llm'
import { bootServices } from '@gencode-ai/testkit'
import { measure } from './measure.mjs'
import * as Read from '../../packages/tool-read/dist/index.js'

const SIZE = Number(process.env.READ_BENCH_BYTES ?? 1024 ** 3)
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'read-formats-')))
const utf8File = join(dir, 'big-utf8.txt')
const gbFile = join(dir, 'big-gb18030.txt')
const pdfFile = join(dir, 'doc.pdf')

/** The same lines (mixed Chinese and ASCII, as source code is) in UTF-8 and in GB18030. */
function generate() {
  const utf8 = openSync(utf8File, 'w')
  const gb = openSync(gbFile, 'w')
  let line = 0
  let written = 0
  while (written < SIZE) {
    let chunk = ''
    for (let i = 0; i < 20000; i++) chunk += `第${++line}行 // 中文注释：编码测试 value=${(line * 7919) % 100000}\n`
    written += writeSync(utf8, chunk)
    writeSync(gb, iconv.encode(chunk, 'gb18030'))
  }
  closeSync(utf8)
  closeSync(gb)
  return line
}

async function makePdf(count) {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let n = 1; n <= count; n++) {
    const page = doc.addPage([595, 842])
    for (let row = 0; row < 40; row++) page.drawText(`Page ${n}, row ${row}: lorem ipsum dolor sit amet`, { x: 40, y: 800 - row * 18, font, size: 11 })
  }
  writeFileSync(pdfFile, await doc.save())
}

async function host() {
  const ctx = await bootServices({ cwd: dir, sandbox: 'workspace-write' })
  await ctx.plugin(Read, {})
  return ctx
}

let seq = 0
async function read(ctx, args) {
  const result = await ctx.tools.execute({ callId: CallId(`f${++seq}`), name: 'read_file', arguments: args, signal: new AbortController().signal })
  if (result.isError) throw new Error(JSON.stringify(result.content))
  return result
}

const row = (name, { ms, rssMB }, base, target) => `${name.padEnd(40)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(2).padStart(6)}x  rss +${rssMB.toFixed(1)} MB  (${target})`

try {
  const lines = generate()
  await makePdf(200)
  const ctx = await host()
  const offset = lines - 2100
  const utf8 = { file_path: utf8File, offset }
  const gb = { file_path: gbFile, offset }
  // Same window, same text: the decode must agree before anything is timed.
  const [a, b] = [await read(ctx, utf8), await read(ctx, gb)]
  if (JSON.stringify(a.value.lines) !== JSON.stringify(b.value.lines)) throw new Error('the GB18030 window differs from the UTF-8 one')
  if (b.value.encoding !== 'GB18030') throw new Error(`detected ${b.value.encoding}, not GB18030`)
  for (let i = 0; i < 3; i++) await read(ctx, { file_path: pdfFile, pages: '100-110' })

  const [textBase, textGb] = await measure([() => read(ctx, utf8), () => read(ctx, gb)], 5)
  const [pdfFirst, pdfLast] = await measure([() => read(ctx, { file_path: pdfFile, pages: '1-10' }), () => read(ctx, { file_path: pdfFile, pages: '190-200' })], 7)
  console.log(`product composition (dsh-sandbox-policy workspace-write + dsh-fs-sandbox); ${lines} lines, window lines ${offset}-${offset + a.value.lines.length - 1}`)
  console.log(row('UTF-8 window near the end (baseline)', textBase, textBase.ms, 'baseline'))
  console.log(row('GB18030 window near the end / UTF-8', textGb, textBase.ms, 'target <= 2x'))
  console.log(row('PDF pages 1-10 (baseline)', pdfFirst, pdfFirst.ms, 'baseline'))
  console.log(row('PDF pages 190-200 / pages 1-10', pdfLast, pdfFirst.ms, 'target <= 2x'))
  await ctx.fiber.dispose()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
