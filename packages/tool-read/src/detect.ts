/** Which encoding a non-UTF-8 sample is in: jschardet's ranked guesses, kept only when the decoded text looks like text. */

import { detectAll } from 'jschardet'
import { decodeSample, readableName, unsupportedName } from './encoding.ts'

/**
 * A sample's verdict: binary; an encoding no decoder here reads (by name); or an encoding, with the rivals that would
 * read it otherwise when the guess is not sure.
 */
export type Detection = { kind: 'binary' } | { kind: 'unsupported', name: string } | { kind: 'text', encoding: string, alternatives?: string[] }

/** A rival this close to the best guess (and decoding the sample differently) makes the guess unsure. */
const RIVAL_MARGIN = 0.8
/** Below this confidence a guess is never sure. */
const SURE_CONFIDENCE = 0.5

/** UTF-8 but for a few stray bytes (9 in 10 non-ASCII characters decode): any legacy reading would garble it. */
export function strayBytesInUtf8(sample: Uint8Array): boolean {
  let good = 0
  let bad = 0
  for (const char of new TextDecoder().decode(sample)) {
    if (char === '\uFFFD') bad++
    else if ((char.codePointAt(0) ?? 0) > 0x7f) good++
  }
  return good > 0 && good >= bad * 9
}

export function detect(sample: Uint8Array): Detection {
  const all = detectAll(sample, { minimumThreshold: 0.01 })
  const top = all[0]?.encoding
  if (top === undefined || top === null) return { kind: 'binary' }
  const unsupported = unsupportedName(top)
  if (unsupported !== undefined) return { kind: 'unsupported', name: unsupported }
  const ranked = all.flatMap(({ encoding, confidence }) => {
    const name = encoding === null ? undefined : readableName(encoding)
    return name === undefined ? [] : [{ name, confidence }]
  })
  const best = ranked[0]
  // NULs are text only in UTF-16/32.
  if (best === undefined || (!best.name.startsWith('utf-') && sample.includes(0))) return { kind: 'binary' }
  const text = decodeSample(sample, best.name)
  if (!plausible(text)) return { kind: 'binary' }
  // Other readings of the sample no worse than the best's (a rival that turns letters into controls is none).
  const bad = badness(text)
  const readings: { name: string, confidence: number }[] = []
  for (const candidate of ranked) {
    if (candidate.name === best.name || readings.some(({ name }) => name === candidate.name)) continue
    const other = decodeSample(sample, candidate.name)
    if (other !== text && badness(other) <= bad) readings.push(candidate)
  }
  const sure = best.confidence >= SURE_CONFIDENCE && !readings.some(({ confidence }) => confidence >= best.confidence * RIVAL_MARGIN)
  return { kind: 'text', encoding: best.name, ...sure ? {} : { alternatives: readings.slice(0, 3).map(({ name }) => name) } }
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
 * Whether decoded text reads as text: few controls or undecodable bytes, and the non-ASCII characters (the ones
 * the encoding decides) not one repeated symbol or a spray of non-letters — as a blob read in a legacy code page is.
 */
export function plausible(text: string): boolean {
  let chars = 0
  let controls = 0
  let high = 0
  let letters = 0
  const counts = new Map<string, number>()
  for (const char of text) {
    chars++
    const code = char.codePointAt(0) ?? 0
    if (isControl(code)) controls++
    if (code < 0x80) continue
    high++
    if (/\p{L}|\p{M}/u.test(char)) letters++
    counts.set(char, (counts.get(char) ?? 0) + 1)
  }
  if (chars === 0) return true
  if (controls > chars * 0.02) return false
  if (high < 16) return true
  const top = Math.max(...counts.values())
  // Mostly non-ASCII and one symbol, or mostly non-ASCII and not letters: no language is written so.
  return !(high > chars * 0.5 && (top > high * 0.8 || letters < high * 0.5))
}
