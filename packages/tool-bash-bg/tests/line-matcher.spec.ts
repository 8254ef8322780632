import { describe, expect, it } from 'vitest'
import { LineMatcher } from '../src/tool/line-matcher.ts'
import { compileLinePattern } from '../src/tool/line-pattern.ts'
import { OutputLines } from '../src/tool/output-lines.ts'

/** A matcher on a real thread, with what it reported. */
function matcherOf(pattern: string, every: boolean) {
  const matched: string[] = []
  const failed: Error[] = []
  const events = { match: (line: string) => matched.push(line), fail: (error: Error) => failed.push(error) }
  const matcher = new LineMatcher(compileLinePattern(pattern), every, events)
  return { matcher, matched, failed }
}

describe('LineMatcher: lines tested on a thread of their own', () => {
  it('reports each matching line in order with every (as a watch would), and drained waits for all of them', async () => {
    const { matcher, matched, failed } = matcherOf('^ready \\d+$', true)
    try {
      for (const line of ['ready 1', 'noise', 'ready 2', 'ready x', 'ready 3']) matcher.push(line)
      await matcher.drained()
      expect(matched).toEqual(['ready 1', 'ready 2', 'ready 3'])
      expect(failed).toEqual([])
      expect(matcher.untested).toBe(0)
    } finally {
      matcher.close()
    }
  })

  it('reports only the first matching line of a batch without every', async () => {
    const { matcher, matched } = matcherOf('ready', false)
    try {
      for (const line of ['ready 1', 'ready 2']) matcher.push(line)
      await matcher.drained()
      expect(matched).toEqual(['ready 1'])
    } finally {
      matcher.close()
    }
  })

  it('says the thread failed when it cannot start its pattern, and drains at once after', async () => {
    const failed: Error[] = []
    const matcher = new LineMatcher({ source: '(' }, false, { match: () => {}, fail: (error) => failed.push(error) })
    matcher.push('anything')
    await matcher.drained()
    expect(failed).toHaveLength(1)
    expect(failed[0]?.message).toMatch(/missing closing \)|parsing regexp/)
    matcher.push('ignored once closed')
    await matcher.drained()
  })
})

describe('OutputLines: a line ends at LF, CRLF or a lone CR', () => {
  it('splits CR-only progress, keeps a CRLF split across chunks as one end, and decodes across chunks', () => {
    const lines = new OutputLines()
    expect(lines.feed(Buffer.from('10%\r50%\rReady\r'))).toEqual(['10%', '50%', 'Ready'])
    expect(lines.feed(Buffer.from('\nnext\r\nc'))).toEqual(['next'])
    const euro = Buffer.from('€\n')
    expect(lines.feed(euro.subarray(0, 2))).toEqual([])
    expect(lines.feed(euro.subarray(2))).toEqual(['c€'])
    expect(lines.feed(Buffer.from('\n'))).toEqual([''])
    expect(lines.feed(Buffer.from('tail'))).toEqual([])
    expect(lines.pending()).toBe('tail')
  })

  it('keeps at most 4096 characters of a line, however long it grows before its end', () => {
    const lines = new OutputLines()
    lines.feed(Buffer.from('x'.repeat(5000)))
    expect(lines.pending()).toHaveLength(4096)
    expect(lines.feed(Buffer.from(`${'y'.repeat(5000)}\n`))).toEqual(['x'.repeat(4096)])
  })
})
