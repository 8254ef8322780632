import { describe, expect, it } from 'vitest'
import { WindowCollector } from '../src/window.ts'

const request = { offset: 4, limit: 2, maxLineLength: 100, maxBytes: 102400 }

describe('WindowCollector.skipLines (the line skip both scanners share)', () => {
  for (const [what, chunk, newline] of [['decoded text', 'a\nb\nc\nd\ne\nf', '\n'], ['raw bytes', Buffer.from('a\nb\nc\nd\ne\nf'), 10]] as const) {
    it(`${what}: counts only the lines before the window, then everything once it is full`, () => {
      const window = new WindowCollector(request)
      const nextNewline = (from: number) => (chunk as { indexOf(needle: string | number, from: number): number }).indexOf(newline, from)
      // Three lines precede offset 4: the scan resumes at "d".
      expect(window.skipLines(nextNewline, 0)).toBe(6)
      expect([window.lineCount, window.skippable]).toEqual([3, 0])
      window.takeLine('d', true)
      window.takeLine('e', true)
      // Full: the rest of the chunk is counted and the chunk runs out (skippable stays above 0).
      expect(window.skipLines(nextNewline, 10)).toBe(10)
      expect([window.lineCount, window.skippable]).toEqual([5, Number.POSITIVE_INFINITY])
      expect(window.exact().lines).toEqual(['d', 'e'])
    })
  }

  it('a chunk that runs out before the window stops where its last line ended', () => {
    const window = new WindowCollector({ ...request, offset: 10 })
    expect(window.skipLines((from) => 'x\ny\npartial'.indexOf('\n', from), 0)).toBe(4)
    expect([window.lineCount, window.skippable]).toEqual([2, 7])
  })
})
