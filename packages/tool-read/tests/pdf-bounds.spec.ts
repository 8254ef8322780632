/**
 * A PDF parse is bounded off the host's thread: memory (pdfMemoryMB), time (pdfTimeoutMs), the
 * call's abort and the plugin's dispose each end it with a clear answer, the host's event loop
 * runs meanwhile, and the next read works.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { Read, makePdf, readHost } from './harness.ts'
import { bombPdf } from './pdf-fixtures.ts'

let dir: string
let zeros: Buffer
let drawing: Buffer
beforeAll(async () => {
  dir = await makeTmpDir()
  // 300 MB of zeros (a 0.3 MB file); 200 MB of path operators, which draw and give no text.
  zeros = await bombPdf('0', 300 * 2 ** 20)
  drawing = await bombPdf('0 0 m 10 10 l S\n', 200 * 2 ** 20)
}, 60_000)
afterAll(async () => { await removeTmpDir(dir) })

let host: Host | undefined
afterEach(async () => {
  await host?.dispose()
  host = undefined
})

async function put(on: Host, name: string, bytes: Uint8Array): Promise<string> {
  await writeFile(join(on.cwd, name), bytes)
  return name
}

const code = (result: Awaited<ReturnType<typeof execTool>>) => result.isError ? result.error.info?.code : 'no error'

/** Settles within `ms` or fails (a hang is the finding). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms) })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

describe('limits', () => {
  it('a stream that inflates past pdfMemoryMB: the limit named, the event loop alive meanwhile, the next read fine', async () => {
    host = await readHost({ pdfMemoryMB: 128, pdfTimeoutMs: 120_000 })
    const name = await put(host, 'zeros.pdf', zeros)
    let ticks = 0
    const ticker = setInterval(() => { ticks++ }, 10)
    const result = await within(90_000, execTool(host.ctx, 'read_file', { file_path: name }))
    clearInterval(ticker)
    expect(textOf(result)).toBe(`Error: cannot read ${JSON.stringify(join(host.cwd, name))}: the PDF needs more than 128 MB to parse (pdfMemoryMB) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfMemoryMB in tool-read's config`)
    expect(code(result)).toBe('FS_TOO_LARGE')
    // The host's thread kept turning while pdf.js inflated (on it, not one tick would run).
    expect(ticks).toBeGreaterThan(5)
    const next = await execTool(host.ctx, 'read_file', { file_path: await put(host, 'ok.pdf', await makePdf(1)) })
    expect(textOf(next)).toBe('--- Page 1 ---\nPage 1 text\nsecond line')
  }, 120_000)

  it('a parse past pdfTimeoutMs: the limit named', async () => {
    host = await readHost({ pdfTimeoutMs: 300 })
    const name = await put(host, 'slow.pdf', drawing)
    const result = await within(30_000, execTool(host.ctx, 'read_file', { file_path: name }))
    expect(textOf(result)).toBe(`Error: cannot read ${JSON.stringify(join(host.cwd, name))}: the PDF took more than 300 ms to parse (pdfTimeoutMs) — read fewer pages at a time, convert it to text first (e.g. pdftotext) and read that, or raise pdfTimeoutMs in tool-read's config`)
    expect(code(result)).toBe('FS_TOO_LARGE')
  }, 60_000)
})

describe('abort and dispose end a parse in flight', () => {
  it('the call\'s abort: read aborted, at once', async () => {
    host = await readHost({ pdfTimeoutMs: 120_000 })
    const name = await put(host, 'abort.pdf', drawing)
    const controller = new AbortController()
    setTimeout(() => { controller.abort() }, 500)
    const result = await within(10_000, execTool(host.ctx, 'read_file', { file_path: name }, { signal: controller.signal }))
    expect(textOf(result)).toBe('Error: read aborted')
    expect(code(result)).toBe('FS_ABORTED')
  }, 60_000)

  it('the plugin\'s dispose: the call ends as read aborted', async () => {
    host = await bootHost()
    const fiber = await host.ctx.plugin(Read, { pdfTimeoutMs: 120_000 })
    const name = await put(host, 'dispose.pdf', drawing)
    const call = execTool(host.ctx, 'read_file', { file_path: name })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await fiber.dispose()
    const result = await within(10_000, call)
    expect(textOf(result)).toBe('Error: read aborted')
  }, 60_000)
})
