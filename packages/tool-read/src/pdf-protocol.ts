/** The messages between read_file and its PDF parse thread. */

/** The thread's workerData: the file's bytes (its own copy, transferred). */
export interface PdfStart {
  data: Uint8Array
}

/** One page's text, at most `maxChars` of it (more is never shown). */
export interface PdfRequest {
  number: number
  maxChars: number
}

export type PdfReply =
  | { type: 'open', total: number }
  | { type: 'page', number: number, text: string }
  | { type: 'error', name: string, message: string }
