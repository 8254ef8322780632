import { PDFDocument, StandardFonts } from 'pdf-lib'
import { bootHost, type Host, type HostOptions } from '@gencode-ai/testkit'
import * as Read from '../src/index.ts'
import type { Config } from '../src/config.ts'

export { Read }

/** The real host with tool-read loaded (the fs provider's cwd is a fresh temp dir). */
export async function readHost(config: Partial<Config> = {}, options: HostOptions = {}): Promise<Host> {
  const host = await bootHost(options)
  await host.ctx.plugin(Read, config)
  return host
}

/** A PDF of `count` pages: page N reads "Page N text" and "second line", except those in `blank` (no text layer). */
export async function makePdf(count: number, blank: readonly number[] = []): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let n = 1; n <= count; n++) {
    const page = doc.addPage([200, 200])
    if (blank.includes(n)) continue
    page.drawText(`Page ${n} text`, { x: 10, y: 150, font, size: 12 })
    page.drawText('second line', { x: 10, y: 130, font, size: 12 })
  }
  return await doc.save({ useObjectStreams: false })
}
