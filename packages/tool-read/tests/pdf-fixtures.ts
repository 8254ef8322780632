/**
 * PDFs written by hand for the tests: objects assembled with a correct xref table, CID fonts that
 * need pdf.js's predefined CMaps (no embedded font), and decompression bombs deflated at test time.
 */
import { createDeflate } from 'node:zlib'

/** Objects numbered 1.. in order; object 1 is the catalog. `header` replaces `%PDF-1.4` (junk before it, or none). */
export function assemble(objects: readonly string[], { header = '%PDF-1.4\n', trailer = '' } = {}): Buffer {
  let out = header
  const offsets: number[] = []
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'))
    out += `${i + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = Buffer.byteLength(out, 'latin1')
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailer} >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(out, 'latin1')
}

const page = (resources: string) => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << ${resources} >> /Contents 4 0 R >>`

/** One page whose content stream is `content` (latin1), with /F1 as `font` (object 5) and more objects from 6 on. */
type Framing = { header?: string, trailer?: string }

function onePage(content: string, font: string, more: readonly string[] = [], options: Framing = {}): Buffer {
  return assemble([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page('/Font << /F1 5 0 R >>'),
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    font,
    ...more,
  ], options)
}

/** A Helvetica page showing `text` (ASCII). */
export function helveticaPdf(text: string, options: Framing = {}): Buffer {
  return onePage(`BT /F1 24 Tf 50 700 Td (${text}) Tj ET`, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>', [], options)
}

/**
 * A Type0 font over a predefined CMap (`UniGB-UCS2-H`, `GBK-EUC-H`, `90ms-RKSJ-H`, `Identity-H`, …)
 * and a descendant CID font of the collection `ordering` (GB1, Japan1, …), not embedded: the codes
 * in `hex` mean text only through pdf.js's CMap files.
 */
export function cidPdf(encoding: string, ordering: string, hex: string, subtype = 'CIDFontType0'): Buffer {
  return onePage(`BT /F1 24 Tf 50 700 Td <${hex}> Tj ET`,
    `<< /Type /Font /Subtype /Type0 /BaseFont /CIDTest /Encoding /${encoding} /DescendantFonts [6 0 R] >>`,
    [
      `<< /Type /Font /Subtype /${subtype} /BaseFont /CIDTest /CIDSystemInfo << /Registry (Adobe) /Ordering (${ordering}) /Supplement 2 >> /FontDescriptor 7 0 R >>`,
      '<< /Type /FontDescriptor /FontName /CIDTest /Flags 6 /FontBBox [0 -200 1000 900] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 80 >>',
    ])
}

/** `unit` repeated to `bytes`, deflated in 1 MiB blocks (the whole never sits in memory). */
async function deflatedRun(unit: string, bytes: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 6 })
  const parts: Buffer[] = []
  deflate.on('data', (part: Buffer) => parts.push(part))
  const ended = new Promise((resolve) => deflate.on('end', resolve))
  const block = Buffer.from(unit.repeat(Math.ceil(2 ** 20 / unit.length)).slice(0, 2 ** 20), 'latin1')
  for (let written = 0; written < bytes; written += block.length) {
    if (!deflate.write(block)) await new Promise((resolve) => deflate.once('drain', resolve))
  }
  deflate.end()
  await ended
  return Buffer.concat(parts)
}

/** One Helvetica page whose FlateDecode content stream inflates to `bytes` of `unit` repeated. */
export async function bombPdf(unit: string, bytes: number): Promise<Buffer> {
  const stream = await deflatedRun(unit, bytes)
  return assemble([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    page('/Font << /F1 5 0 R >>'),
    `<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n${stream.toString('latin1')}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ])
}
