/**
 * Whole-file reads under load (issue 33's load observation): 30 (12 unless STRESS=1) concurrent reads of one 40 MB PDF in a real host
 * process (product composition). Each is answered, and the host's peak memory stays bounded: whole-file reads share
 * one budget, so a read past it waits for earlier ones instead of holding its own copy and parse at once.
 */
import { randomBytes } from 'node:crypto'
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { runs, withinMs } from '../src/budget.ts'

const FIXTURE = fileURLToPath(new URL('../fixtures/read-many.ts', import.meta.url))
/** The review's 30 under STRESS; 12 in the bounded form (without the budget, ~210 MB each at once: 2.5 GB). */
const CALLS = runs(30, 12)
/** 30 reads each holding the file, its copy in a parse thread and the thread itself peaked at 3.8 GB (7.2 GiB here). */
const PEAK_KIB = 1.25 * 2 ** 20

let dir: string
beforeAll(async () => {
  dir = await makeTmpDir('load-')
  const doc = await PDFDocument.create()
  const page = doc.addPage([300, 200])
  page.drawText('Page 1 of a large file', { x: 10, y: 150, font: await doc.embedFont(StandardFonts.Helvetica), size: 12 })
  // 40 MB that does not compress: the file is as large on disk as in memory.
  await doc.attach(randomBytes(40 * 2 ** 20), 'blob.bin', { mimeType: 'application/octet-stream' })
  await writeFile(join(dir, 'large.pdf'), await doc.save({ useObjectStreams: false }))
}, 120_000)
afterAll(async () => { await removeTmpDir(dir) })

describe('whole-file reads share one memory budget', () => {
  it(`${CALLS} concurrent reads of a 40 MB PDF: all answered, the host's peak memory bounded`, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, dir, 'large.pdf', String(CALLS)], {
      cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (data: Buffer) => { out += String(data) })
    await withinMs(150_000, `${CALLS} concurrent PDF reads`, new Promise((resolve) => child.once('exit', resolve)))
    const [, peak, answered, first] = /^result (\d+) (\d+) (.*)$/mu.exec(out) ?? []
    console.log(`load: ${CALLS} reads of a 40 MB PDF, peak RSS ${Math.round(Number(peak) / 1024)} MiB`)
    expect(Number(answered)).toBe(CALLS)
    expect(JSON.parse(first!)).toContain('Page 1 of a large file')
    expect(Number(peak)).toBeLessThan(PEAK_KIB)
  }, 180_000)
})
