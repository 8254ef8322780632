/**
 * The newline counter of the provider path (a hand-assembled WebAssembly module) against a plain
 * reference, and the scanner built on it: its window must not depend on where chunks break.
 */
import { describe, expect, it } from 'vitest'
import { countNewlines, scriptCounter, wasmCounter } from '../src/newlines.ts'
import { scanTextChunks } from '../src/text-stream.ts'
import type { WindowRequest } from '../src/window.ts'

/** The reference: one character at a time. */
function reference(text: string, from: number) {
  let newlines = 0
  for (let i = from; i < text.length; i++) if (text[i] === '\n') newlines += 1
  return { newlines, bytes: new TextEncoder().encode(text.slice(from)).length }
}

/** A deterministic pseudo-random source, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
}

const PIECES = ['a', 'line 1234', '\n', '\r\n', '\r', 'é', 'ü', '漢字', '😀', '\t', ' ', '\u2028', '\u0a0a', '\u010a']

function text(next: () => number, length: number): string {
  let out = ''
  while (out.length < length) out += PIECES[Math.floor(next() * PIECES.length)]!
  return out
}

describe('newline counter', () => {
  const wasm = wasmCounter()

  it('runs as WebAssembly SIMD on this Node, and the provider path uses it', () => {
    expect(wasm).toBeDefined()
    expect(countNewlines).not.toBe(scriptCounter)
  })

  it('counts newlines and UTF-8 bytes exactly, from any index, for any text', () => {
    const next = random(7)
    const samples = ['', '\n', 'x', '\n\n\n', 'no newline', '\r\n'.repeat(17), '😀\n'.repeat(9)]
    for (let i = 0; i < 200; i++) samples.push(text(next, Math.floor(next() * 300)))
    for (const sample of samples) {
      for (const from of [0, 1, Math.floor(sample.length / 2), sample.length]) {
        if (from > sample.length) continue
        const expected = reference(sample, from)
        expect(wasm!(sample, from)).toEqual(expected)
        expect(scriptCounter(sample, from)).toEqual(expected)
      }
    }
  })

  it('text larger than its 256 KiB memory goes in pieces, never splitting a character', () => {
    const next = random(11)
    // Multibyte characters land on every side of the piece edges.
    for (const filler of ['a', 'é', '漢', '😀', 'ab\n', '\n']) {
      const big = `${filler.repeat(Math.ceil(300_000 / filler.length))}\n${text(next, 100_000)}`
      expect(wasm!(big, 0)).toEqual(reference(big, 0))
      expect(wasm!(big, 12_345)).toEqual(reference(big, 12_345))
    }
  })
})

describe('scanTextChunks: the window does not depend on chunk boundaries', () => {
  const requests: WindowRequest[] = [
    { offset: 1, limit: 2000, maxLineLength: 2000, maxBytes: 102400 },
    { offset: 40, limit: 7, maxLineLength: 12, maxBytes: 102400 },
    { offset: 300, limit: 100000, maxLineLength: 5, maxBytes: 600 },
    { offset: 5000, limit: 10, maxLineLength: 2000, maxBytes: 102400 },
  ]

  it('exact totals: any split gives the one-chunk window', async () => {
    const next = random(3)
    const signal = new AbortController().signal
    for (let round = 0; round < 30; round++) {
      const whole = text(next, 20_000 + Math.floor(next() * 20_000)) + (round % 2 === 0 ? '\n' : '')
      const chunks: string[] = []
      if (round % 3 === 2) {
        // One line per chunk, each ending in its newline.
        chunks.push(...whole.split(/(?<=\n)/))
      } else {
        for (let at = 0; at < whole.length;) {
          let end = Math.min(whole.length, at + 1 + Math.floor(next() * (round % 3 === 0 ? 50 : 5000)))
          // A provider's decoder never ends a chunk inside a surrogate pair.
          if (/[\ud800-\udbff]/.test(whole[end - 1] ?? '')) end += 1
          chunks.push(whole.slice(at, end))
          at = end
        }
      }
      if (round % 5 === 0) chunks.splice(1, 0, '', '')
      for (const request of requests) {
        expect(await scanTextChunks(chunks, request, undefined, signal)).toEqual(await scanTextChunks([whole], request, undefined, signal))
      }
    }
  })

  it('beyond 64 MiB the estimate counts the UTF-8 bytes of every chunk read, counted or shown', async () => {
    const signal = new AbortController().signal
    const size = 100 * 1024 * 1024
    // 1000 lines of 3 bytes ('é\n') per chunk; the window starts in the third chunk and ends in
    // the fourth, which has a line beyond it: the scan stops after 4 chunks, 4000 lines, 12000 bytes.
    const chunks = Array.from({ length: 10 }, () => 'é\n'.repeat(1000))
    const window = await scanTextChunks(chunks, { offset: 2990, limit: 20, maxLineLength: 2000, maxBytes: 102400 }, size, signal)
    expect(window.lines).toEqual(Array.from({ length: 20 }, () => 'é'))
    expect(window.totalExact).toBe(false)
    expect(window.totalLines).toBe(Math.round(size * (4000 / 12000) / 1e5) * 1e5)
  })
})
