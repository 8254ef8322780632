/**
 * PDF decompression bombs against a real host process: one page whose content stream inflates to
 * 800 MB (of zeros, or of text operators, as a 0.8 MB or 2.4 MB file), read by tool-read built
 * (plain node, dist) and from source (tsx). The read ends with a true answer and bounded memory,
 * and the host answers SIGTERM while pdf.js is still parsing.
 */
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { bombPdf } from '../../tool-read/tests/pdf-fixtures.ts'
import { withinMs } from '../src/budget.ts'

const FIXTURE = fileURLToPath(new URL('../fixtures/pdf-host.mjs', import.meta.url))
const BUILDS = [
  ['dist, plain node', [], fileURLToPath(new URL('../../tool-read/dist/index.js', import.meta.url))],
  ['source, tsx', ['--import', 'tsx'], fileURLToPath(new URL('../../tool-read/src/index.ts', import.meta.url))],
] as const
const INFLATED = 800 * 2 ** 20
const PEAK_KIB = 1.5 * 2 ** 20

let dir: string
const bombs: Record<string, string> = {}
beforeAll(async () => {
  dir = await makeTmpDir()
  for (const [name, unit] of [['zeros', '0'], ['text', 'BT /F1 12 Tf 10 10 Td (AAAA) Tj ET\n']] as const) {
    bombs[name] = join(dir, `${name}.pdf`)
    await writeFile(bombs[name], await bombPdf(unit, INFLATED))
  }
}, 120_000)
afterAll(async () => { await removeTmpDir(dir) })

function host(args: readonly string[], module: string, file: string) {
  const child = spawn(process.execPath, [...args, FIXTURE, module, file], { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (data: Buffer) => { out += String(data) })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const saw = (what: string) => new Promise<void>((resolve, reject) => {
    const check = () => { if (out.includes(what)) resolve() }
    child.stdout.on('data', check)
    child.once('exit', () => { check(); reject(new Error(`the child host exited before "${what}": ${out}`)) })
  })
  return { child, exited, saw, out: () => out }
}

describe.each(BUILDS)('an 800 MB content stream (%s)', (_name, args, module) => {
  it.each(['zeros', 'text'])('of %s: a true answer, the host under 1.5 GB resident', async (kind) => {
    const file = bombs[kind] ?? ''
    const run = host(args, module, file)
    try {
      await withinMs(90_000, 'the read to settle', run.saw('result '))
      const [, peak, text] = /result (\d+) (.*)/u.exec(run.out()) ?? []
      expect(Number(peak)).toBeLessThan(PEAK_KIB)
      const answer = JSON.parse(text ?? '""') as string
      if (kind === 'zeros') {
        // Which limit ends it first depends on the machine's speed: both are true answers.
        const [limit, key] = answer.includes('(pdfMemoryMB)') ? ['needs more than 512 MB', 'pdfMemoryMB'] : ['took more than 30000 ms', 'pdfTimeoutMs']
        expect(answer).toBe(`Error: cannot read ${JSON.stringify(file)}: the PDF ${limit} to parse (${key}) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise ${key} in tool-read's config`)
      } else {
        // The page's text is there to its first 100 KB (the rest would not be shown anyway).
        expect(answer.startsWith(`--- Page 1 ---\n${'A'.repeat(300)}`)).toBe(true)
      }
    } finally {
      run.child.kill('SIGKILL')
    }
  }, 120_000)

  it('SIGTERM while pdf.js parses: the host handles it at once', async () => {
    const run = host(args, module, bombs.zeros ?? '')
    try {
      await withinMs(60_000, 'the read to start', run.saw('reading'))
      await new Promise((resolve) => setTimeout(resolve, 300))
      run.child.kill('SIGTERM')
      // Parsing on the host's own thread, the handler would wait for the whole parse (minutes, or an OOM abort).
      await withinMs(5000, 'the SIGTERM handler', run.exited)
      expect(run.out()).toContain('sigterm false')
    } finally {
      run.child.kill('SIGKILL')
    }
  }, 90_000)
})
