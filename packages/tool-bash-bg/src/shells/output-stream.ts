/**
 * A foreground stream as the value carries it: the text kept of it, or, when that is binary, only its size. Judged
 * here, where both worlds' runs pass through (local: the tail in foreground.ts; another world: world.ts).
 */
import type { StreamTail } from './world-types.ts'

/** The share of characters that may be undecodable bytes or controls no text uses before output counts as binary. */
const MAX_ODD_SHARE = 0.1
/** Controls text does use: backspace, tab, LF, VT, FF, CR, and ESC (colour and cursor sequences). */
const TEXT_CONTROLS = '\b\t\n\v\f\r\x1b'

/** Binary: a NUL, or more than MAX_ODD_SHARE of the characters U+FFFD (bytes UTF-8 could not decode) or other controls. */
function isBinary(text: string): boolean {
  let odd = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code === 0) return true
    if (code === 0xfffd || code === 0x7f || (code < 0x20 && !TEXT_CONTROLS.includes(text.charAt(index)))) odd++
  }
  return odd > text.length * MAX_ODD_SHARE
}

/** `bytes`: the whole stream's size, which a binary stream is described by (its kept text is dropped). */
export function streamValue(kept: StreamTail, bytes: number): StreamTail {
  return isBinary(kept.text) ? { text: '', cut: bytes, binary: true } : kept
}
