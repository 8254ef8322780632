/** Which encoding a non-UTF-8 sample is in: jschardet's ranked guesses, kept only when the decoded text looks like text. */

import { decodeSample, readableName, unsupportedName } from './encoding.ts'

/**
 * A sample's verdict: binary; an encoding no decoder here reads (by name); or an encoding, with the rivals that would
 * read it otherwise when the guess is not sure.
 */
export type Detection = { kind: 'binary' } | { kind: 'unsupported', name: string } | { kind: 'text', encoding: string, alternatives?: string[] }

/** A rival this close to the best guess (and decoding the sample differently) makes the guess unsure. */
const RIVAL_MARGIN = 0.8
/** Below this confidence a guess is sure only with no rival half as likely; below the low one, never. */
const SURE_CONFIDENCE = 0.5
const LOW_CONFIDENCE = 0.15
/** Fewer non-ASCII (or NUL, for UTF-16/32) bytes say too little to be sure (4 bytes of Big5 read as EUC-JP with confidence 0.56). */
const MIN_EVIDENCE = 32
/** A CJK reading is sure only when this share of its characters are everyday ones. */
const COMMON_SHARE = 0.9

/**
 * UTF-8 but for a few stray bytes (twice as many non-ASCII characters decode as not): any legacy reading would garble it.
 * Legacy text seldom holds a valid UTF-8 sequence (a lead byte needs 0x80-0xBF trail bytes), so its share is low.
 */
export function strayBytesInUtf8(sample: Uint8Array): boolean {
  let good = 0
  let bad = 0
  for (const char of new TextDecoder().decode(sample)) {
    if (char === '\uFFFD') bad++
    else if ((char.codePointAt(0) ?? 0) > 0x7f) good++
  }
  return good > 0 && good >= bad * 2
}

/** Readings compared: the detector's first few (distinct names), on the sample's first 16 KiB (evidence enough, bounded cost). */
const CANDIDATES = 12
const READING_BYTES = 16 * 1024

/** A byte of ASCII text: printable, or a tab or line break. */
const asciiText = (byte: number): boolean => (byte >= 0x20 && byte < 0x7f) || byte === 0x09 || byte === 0x0a || byte === 0x0d

/**
 * Whether a BOM-less UTF-16/32 reading is borne out by the bytes: whole code units (`size`, the file's length, and the
 * sample's a multiple of the unit), every unit a character (none NUL, surrogates paired, nothing past U+10FFFF), and,
 * for UTF-16, not ASCII text read in pairs (`Hello world` as 效汬潷...: both bytes of most non-Latin units printable ASCII)
 * and NULs where UTF-16 puts them (high bytes: few characters end in a 0 byte).
 */
function unitsFit(sample: Uint8Array, name: string, size: number | undefined): boolean {
  const unit = name.startsWith('utf-32') ? 4 : 2
  if ((size ?? sample.length) % unit !== 0 || sample.length % unit !== 0) return false
  const view = new DataView(sample.buffer, sample.byteOffset, sample.byteLength)
  const little = name.endsWith('le')
  let wide = 0
  let pairs = 0
  let lowNuls = 0
  let high = false // a high surrogate waits for its low one
  for (let at = 0; at < sample.length; at += unit) {
    const code = unit === 4 ? view.getUint32(at, little) : view.getUint16(at, little)
    if (code === 0 || code > 0x10ffff) return false
    const surrogate = code >= 0xd800 && code <= 0xdfff
    if (unit === 4 ? surrogate : (code >= 0xdc00 && code <= 0xdfff) !== high) return false
    high = unit === 2 && code >= 0xd800 && code <= 0xdbff
    if (unit === 2 && code > 0xff) {
      wide++
      if (asciiText(code >> 8) && asciiText(code & 0xff)) pairs++
      if ((code & 0xff) === 0) lowNuls++
    }
  }
  // NULs of UTF-16 text sit in the high bytes of Latin characters; a low byte of 0 (U+xx00) is one character in 256.
  return pairs <= wide / 2 && lowNuls <= wide / 8
}

export async function detect(sample: Uint8Array, size?: number): Promise<Detection> {
  // Loaded on first use (its model costs ~100 ms to load): most hosts never meet a legacy file.
  const { detectAll } = await import('jschardet')
  const all = detectAll(sample, { minimumThreshold: 0.01 })
  const top = all[0]?.encoding
  if (top === undefined || top === null) return { kind: 'binary' }
  const unsupported = unsupportedName(top)
  if (unsupported !== undefined) return { kind: 'unsupported', name: unsupported }
  const readings: Reading[] = []
  for (const { encoding, confidence } of all) {
    const name = encoding === null ? undefined : readableName(encoding)
    if (name === undefined || readings.some((reading) => reading.name === name)) continue
    // No BOM here (a BOM is read before detection): UTF-16/32 only where the bytes are whole characters of it.
    if (/^utf-(16|32)/u.test(name) && !unitsFit(sample, name, size)) continue
    const text = decodeSample(sample.subarray(0, READING_BYTES), name)
    readings.push({ name, confidence, text, faults: badness(text) + (MULTI_BYTE.test(name) ? 0 : oddLetters(text)) })
    if (readings.length === CANDIDATES) break
  }
  // The detector's order, corrected by what each reading does to the text (controls, letters of another script inside words).
  const [best, ...others] = [...readings].sort((a, b) => a.faults - b.faults)
  // NULs are text only in UTF-16/32.
  if (best === undefined || (!best.name.startsWith('utf-') && sample.includes(0))) return { kind: 'binary' }
  if (!plausible(best.text, MULTI_BYTE.test(best.name))) return { kind: 'binary' }
  const rivals = others.filter((other) => other.text !== best.text && other.faults <= best.faults)
  const close = (share: number): boolean => rivals.some(({ confidence }) => confidence >= best.confidence * share)
  const evidence = sample.reduce((count, byte) => count + (byte >= 0x80 || byte === 0 ? 1 : 0), 0)
  const sure = evidence >= MIN_EVIDENCE && !close(RIVAL_MARGIN) && commonShare(sample, best.name) >= COMMON_SHARE
    && (best.confidence >= SURE_CONFIDENCE || (best.confidence >= LOW_CONFIDENCE && !close(0.5)))
  if (sure) return { kind: 'text', encoding: best.name }
  const likely = [...rivals, ...others.filter((other) => other.text !== best.text && !rivals.includes(other))]
  return { kind: 'text', encoding: best.name, alternatives: likely.slice(0, 3).map(({ name }) => name) }
}

/** Lead bytes of everyday CJK characters (GB2312 level 1, Big5's frequent set, KS X 1001 Hangul, JIS level 1, kana) and punctuation. */
const COMMON: Readonly<Record<string, { common: [number, number][], neutral: [number, number][] }>> = {
  'GB18030': { common: [[0xb0, 0xd7]], neutral: [[0xa1, 0xa3]] },
  'Big5': { common: [[0xa4, 0xc6]], neutral: [[0xa1, 0xa3]] },
  'EUC-KR': { common: [[0xb0, 0xc8]], neutral: [[0xa1, 0xa3]] },
  'Shift_JIS': { common: [[0x82, 0x83], [0x88, 0x98], [0xa1, 0xdf]], neutral: [[0x81, 0x81]] },
  'EUC-JP': { common: [[0xa4, 0xa5], [0xb0, 0xcf], [0x8e, 0x8e]], neutral: [[0xa1, 0xa1]] },
}
const within = (byte: number, ranges: readonly [number, number][]): boolean => ranges.some(([low, high]) => byte >= low && byte <= high)

/**
 * Language evidence for a CJK reading: the share of its characters that are everyday ones. Text in that encoding is
 * ~95% so; another encoding's bytes read in it scatter (GB2312 read as Big5 about half). 1 for other encodings.
 */
function commonShare(sample: Uint8Array, encoding: string): number {
  const rows = COMMON[encoding]
  if (rows === undefined) return 1
  let common = 0
  let other = 0
  for (let i = 0; i < sample.length;) {
    const lead = sample[i] ?? 0
    if (lead < 0x80) {
      i++
      continue
    }
    // Shift_JIS half-width kana are one byte; GB18030's four-byte sequences have an ASCII digit second.
    const second = sample[i + 1] ?? 0
    const length = encoding === 'Shift_JIS' && lead >= 0xa1 && lead <= 0xdf ? 1 : encoding === 'GB18030' && second >= 0x30 && second <= 0x39 ? 4 : 2
    if (length === 4) other++
    else if (within(lead, rows.common)) common++
    else if (!within(lead, rows.neutral)) other++
    i += length
  }
  return common + other === 0 ? 1 : common / (common + other)
}

interface Reading {
  name: string
  confidence: number
  text: string
  /** Characters no text in that encoding would hold there. */
  faults: number
}

/** Where CJK text meets ASCII letters (`HTML태그`) the letters are of another script by right. */
const MULTI_BYTE = /^(GB18030|Big5|Shift_JIS|EUC-JP|EUC-KR|Johab|ISO-2022-JP|utf-)/u

const isAsciiLetter = (code: number): boolean => (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)

/** Marks a word may hold between its letters: apostrophes, hyphens, the middle dot, the soft hyphen. */
const INSIDE_WORDS = /[\u2018\u2019\u02bc\u2010\u2011\u00b7\u00ad]/u
const isLetter = (char: string | undefined): boolean => char !== undefined && /\p{L}/u.test(char)

/**
 * Characters no word holds where this reading puts them: next to an ASCII letter, another script's letter (`caf` + a
 * Hebrew letter) or a capital after a small letter (`cafÈ`); between two letters, a symbol (`ΕΛΛ¶ΔΑ`, `caf╔s`).
 * Weighs single-byte readings only: CJK text meets ASCII letters by right.
 */
function oddLetters(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 0x80) continue
    const char = text[i] ?? ''
    const before = text.charCodeAt(i - 1)
    if (/\p{L}/u.test(char)) {
      if (!isAsciiLetter(before) && !isAsciiLetter(text.charCodeAt(i + 1))) continue
      if (!/\p{Script=Latin}/u.test(char) || (before >= 0x61 && before <= 0x7a && /\p{Lu}/u.test(char))) count++
    } else if (!/[\s\p{M}]/u.test(char) && !INSIDE_WORDS.test(char) && isLetter(text[i - 1]) && isLetter(text[i + 1])) {
      count++
    }
  }
  return count
}

/** Characters no text holds: C0 controls but layout ones, DEL, C1 controls, U+FFFD (bytes a code page leaves undefined). */
function isControl(code: number): boolean {
  return (code < 0x20 && !(code >= 0x08 && code <= 0x0d) && code !== 0x1b) || (code >= 0x7f && code < 0xa0) || code === 0xfffd
}

function badness(text: string): number {
  let count = 0
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) count++
  return count
}

/**
 * Whether decoded text reads as text: few controls or undecodable bytes; the non-ASCII characters (the ones the
 * encoding decides) not one repeated symbol or a spray of non-letters; and, in an alphabet, spaces between words —
 * as a blob read in a legacy code page has none of.
 */
function plausible(text: string, multiByte: boolean): boolean {
  let chars = 0
  let controls = 0
  let high = 0
  let letters = 0
  let spaces = 0
  const counts = new Map<string, number>()
  for (const char of text) {
    chars++
    const code = char.codePointAt(0) ?? 0
    if (isControl(code)) controls++
    if (code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d) spaces++
    if (code < 0x80) continue
    high++
    if (/\p{L}|\p{M}/u.test(char)) letters++
    counts.set(char, (counts.get(char) ?? 0) + 1)
  }
  if (chars === 0) return true
  if (controls > chars * 0.02) return false
  // Chinese and Japanese need no spaces; every alphabet here does, at least between sentences (Thai).
  if (!multiByte && chars >= 512 && spaces < chars * 0.01) return false
  if (high < 16) return true
  const top = Math.max(...counts.values())
  // Mostly non-ASCII and one symbol, or mostly non-ASCII and not letters: no language is written so.
  return !(high > chars * 0.5 && (top > high * 0.8 || letters < high * 0.5))
}
