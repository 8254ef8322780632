/** Whether a file's first bytes say PDF: `%PDF-` at the start, after junk in the first 1024 bytes, or no header before an object. */

/** Where pdf.js and poppler look for the header. */
const HEADER_WINDOW = 1024

/**
 * `header`: `%PDF-` opens the file, so it is a PDF. `late`: a `%PDF-n` header after other bytes;
 * `objects`: no header, but (after comments) the file opens with an indirect object. These two are
 * PDFs only if pdf.js can open them; otherwise the file is read as text.
 */
export type PdfEvidence = 'header' | 'late' | 'objects'

export function pdfEvidence(head: Uint8Array): PdfEvidence | undefined {
  const start = Buffer.from(head.buffer, head.byteOffset, Math.min(head.byteLength, HEADER_WINDOW)).toString('latin1')
  if (start.startsWith('%PDF-')) return 'header'
  if (/%PDF-\d/u.test(start)) return 'late'
  // Leading whitespace and `%` comment lines (a binary marker line), then `1 0 obj`.
  if (/^(?:\s*%[^\r\n]*[\r\n])*\s*\d+\s+\d+\s+obj\b/u.test(start)) return 'objects'
  return undefined
}

/**
 * A PDF by its header, or perhaps one (a late or missing header): readPdf reads the latter as text
 * when pdf.js cannot open it. With an `encoding` the caller means text: only a header at the start counts.
 */
export function isPdf(head: Uint8Array, encoding?: string): boolean {
  const evidence = pdfEvidence(head)
  return encoding === undefined ? evidence !== undefined : evidence === 'header'
}
