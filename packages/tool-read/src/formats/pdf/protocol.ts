/** The messages between read_file and its PDF parse thread (one document open at a time). */

export type PdfRequest =
  /** The file's bytes: the thread's own copy, transferred. */
  | { type: 'open', data: Uint8Array }
  /** One page's text, at most `maxChars` of it (more is never shown). */
  | { type: 'page', number: number, maxChars: number }
  | { type: 'close' }

export type PdfReply =
  /** pdf.js is loaded (sent once, unasked). */
  | { type: 'ready' }
  | { type: 'open', total: number }
  | { type: 'page', number: number, text: string }
  | { type: 'closed' }
  | { type: 'error', name: string, message: string }
