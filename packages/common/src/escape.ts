// Names, link targets and echoed paths as model text: escaped so nothing forges a line, and decoded back.
/*
 * An escaped name passed back as an argument is decoded to the name it shows. A name read from disk is a string
 * in which each byte that is not valid UTF-8 is the lone surrogate U+DC00 + byte (as Python's surrogateescape):
 * nameFromBytes / fsPath convert between that and the bytes the filesystem holds.
 */

/**
 * C0, DEL, C1, line/paragraph separators, bidi controls, box drawing (tree lines), and lone surrogates (raw bytes).
 * With the `u` flag the surrogate range matches only unpaired halves, never an emoji.
 */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\u2500-\u257f\ufeff\ud800-\udfff]/u
const UNSAFE_ALL = new RegExp(`${UNSAFE.source}|\\\\`, 'gu')
/**
 * In a command's text output: the controls of UNSAFE but tab and line feed, and its invisible format characters; not
 * box drawing (tables and trees are what output holds) and no surrogates (output is decoded with U+FFFD).
 */
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const TEXT_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/
const TEXT_UNSAFE_ALL = new RegExp(`${TEXT_UNSAFE.source}|\\\\`, 'g')
/** A raw byte of a name: the surrogate-escaped form of a byte that is not valid UTF-8. */
const RAW_BYTE = /[\udc80-\udcff]/u
const ESCAPE = /\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|\\)/

const hex2 = (code: number): string => code.toString(16).padStart(2, '0')

/**
 * `value` as model text: `\xNN` for ASCII controls and raw bytes, `\u{N}` for the other escaped code points. A backslash
 * is doubled only in a value that has another escape, so ordinary names (and Windows-style text) read unchanged.
 */
export function escapeName(value: string): string {
  if (!UNSAFE.test(value)) return value
  return value.replace(UNSAFE_ALL, (char) => {
    if (char === '\\') return '\\\\'
    const code = char.codePointAt(0) as number
    if (code < 0x80) return `\\x${hex2(code)}`
    if (code >= 0xdc80 && code <= 0xdcff) return `\\x${hex2(code - 0xdc00)}`
    return `\\u{${code.toString(16)}}`
  })
}

/**
 * A command's text output as model text: escaped as `escapeName` escapes (a backslash doubled only beside another
 * escape), but lines stay lines: tab and LF as they are, CRLF as LF; a lone CR, ESC, BEL and the rest escaped.
 */
export function escapeText(text: string): string {
  const lines = text.replaceAll('\r\n', '\n')
  if (!TEXT_UNSAFE.test(lines)) return lines
  return lines.replace(TEXT_UNSAFE_ALL, (char) => {
    if (char === '\\') return '\\\\'
    const code = char.codePointAt(0) as number
    return code < 0x80 ? `\\x${hex2(code)}` : `\\u{${code.toString(16)}}`
  })
}

/** A value echoed into a message: escaped, quoted, and cut (saying its full length) so a huge argument never floods it. */
export function echo(value: string, max = 120): string {
  const chars = Array.from(value)
  if (chars.length <= max) return `"${escapeName(value)}"`
  return `"${escapeName(chars.slice(0, max).join(''))}…" (${chars.length} characters)`
}

/** A path named in a message, unquoted: escaped, and cut like `echo`. */
export function shownPath(value: string, max = 240): string {
  const chars = Array.from(value)
  if (chars.length <= max) return escapeName(value)
  return `${escapeName(chars.slice(0, max).join(''))}… (${chars.length} characters)`
}

/** The name an escaped value shows (`\\`, `\xNN` → that byte, `\u{N}`), or undefined when it holds no escape. */
export function unescapeName(value: string): string | undefined {
  if (!ESCAPE.test(value)) return undefined
  const bytes: number[] = []
  let index = 0
  while (index < value.length) {
    const rest = value.slice(index, index + 10)
    const match = /^\\(?:x([0-9a-fA-F]{2})|u\{([0-9a-fA-F]{1,6})\}|(\\))/.exec(rest)
    const point = match?.[2] === undefined ? undefined : Number.parseInt(match[2], 16)
    if (match !== null && (point === undefined || (point <= 0x10ffff && (point < 0xd800 || point > 0xdfff)))) {
      if (match[1] !== undefined) bytes.push(Number.parseInt(match[1], 16))
      else if (point !== undefined) bytes.push(...Buffer.from(String.fromCodePoint(point)))
      else bytes.push(0x5c)
      index += match[0].length
      continue
    }
    const code = value.codePointAt(index) as number
    bytes.push(...fsBytes(String.fromCodePoint(code)))
    index += code > 0xffff ? 2 : 1
  }
  return nameFromBytes(Buffer.from(bytes))
}

/** A name as the filesystem holds it: its string when it is valid UTF-8, else its bytes (for node:fs, which takes either). */
export function fsPath(name: string): string | Buffer {
  return RAW_BYTE.test(name) ? fsBytes(name) : name
}

/** Whether a name holds bytes that are not valid UTF-8 (so it must reach node:fs as a Buffer). */
export const hasRawBytes = (name: string): boolean => RAW_BYTE.test(name)

function fsBytes(name: string): Buffer {
  if (!RAW_BYTE.test(name)) return Buffer.from(name, 'utf8')
  const out: number[] = []
  for (const char of name) {
    const code = char.codePointAt(0) as number
    if (code >= 0xdc80 && code <= 0xdcff) out.push(code - 0xdc00)
    else out.push(...Buffer.from(char, 'utf8'))
  }
  return Buffer.from(out)
}

/** Bytes from the filesystem as a name: UTF-8 decoded, each byte of an invalid sequence kept as U+DC00 + byte. */
export function nameFromBytes(bytes: Buffer): string {
  const text = bytes.toString('utf8')
  if (!text.includes('\ufffd')) return text
  let out = ''
  let index = 0
  while (index < bytes.length) {
    const length = validSequence(bytes, index)
    if (length === 0) {
      out += String.fromCharCode(0xdc00 + (bytes[index] as number))
      index++
    } else {
      out += bytes.toString('utf8', index, index + length)
      index += length
    }
  }
  return out
}

/** The length of the valid UTF-8 sequence at `at` (no overlongs, surrogates or code points past U+10FFFF), 0 if invalid. */
function validSequence(bytes: Buffer, at: number): number {
  const lead = bytes[at] as number
  if (lead < 0x80) return 1
  const [length, low, high] = lead >= 0xc2 && lead <= 0xdf ? [2, 0x80, 0xbf]
    : lead === 0xe0 ? [3, 0xa0, 0xbf] : lead === 0xed ? [3, 0x80, 0x9f] : lead >= 0xe1 && lead <= 0xef ? [3, 0x80, 0xbf]
      : lead === 0xf0 ? [4, 0x90, 0xbf] : lead === 0xf4 ? [4, 0x80, 0x8f] : lead >= 0xf1 && lead <= 0xf3 ? [4, 0x80, 0xbf]
        : [0, 0, 0]
  if (length === 0 || at + length > bytes.length) return 0
  const second = bytes[at + 1] as number
  if (second < low || second > high) return 0
  for (let next = at + 2; next < at + length; next++) {
    const byte = bytes[next] as number
    if (byte < 0x80 || byte > 0xbf) return 0
  }
  return length
}
