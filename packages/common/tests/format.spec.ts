// The shared formats: byte counts, durations, quoting and the abort error, as each tool prints them.
import { describe, expect, it } from 'vitest'
import { TOOL_ABORTED } from '@deepseek-ai/dsh-tools'
import { aborted } from '../src/abort.ts'
import { formatBytes } from '../src/bytes.ts'
import { formatDuration } from '../src/duration.ts'
import { quoted } from '../src/quote.ts'

describe('formatBytes', () => {
  it('binary steps with one decimal, IEC names by default (bash_bg and kill_shell)', () => {
    expect([0, 1023, 1024, 12_800, 1024 * 1024 - 1, 3 * 1024 * 1024].map((n) => formatBytes(n)))
      .toEqual(['0 B', '1023 B', '1.0 KiB', '12.5 KiB', '1024.0 KiB', '3.0 MiB'])
  })

  it('the same steps under the names a tool documents (read_file: bytes, KB, MB)', () => {
    const units = ['bytes', 'KB', 'MB'] as const
    expect([512, 49_254, 5 * 1024 * 1024].map((n) => formatBytes(n, units))).toEqual(['512 bytes', '48.1 KB', '5.0 MB'])
  })
})

describe('formatDuration', () => {
  it('compact: whole seconds, then minutes and seconds, then hours and minutes; never negative', () => {
    expect([0, 999, 3_000, 59_999, 60_000, 312_000, 3_599_999, 3_600_000, 3_720_000, -5_000].map((ms) => formatDuration(ms)))
      .toEqual(['0s', '0s', '3s', '59s', '1m00s', '5m12s', '59m59s', '1h00m', '1h02m', '0s'])
  })

  it('tenths: below a minute a tenth shows when there is one (kill_shell\'s card)', () => {
    expect([5_000, 2_500, 2_960, 59_900, 90_000].map((ms) => formatDuration(ms, 'tenths'))).toEqual(['5s', '2.5s', '3s', '59.9s', '1m30s'])
  })

  it('coarse: the largest whole unit in words (the /tasks Started column)', () => {
    expect([1_000, 59_999, 600_000, 10_800_000].map((ms) => formatDuration(ms, 'coarse'))).toEqual(['1 sec', '59 sec', '10 min', '3 h'])
  })
})

describe('quoted', () => {
  it('JSON-quotes; past 120 code points cuts with … and says the full length outside the quotes', () => {
    expect(quoted('a"b\n')).toBe('"a\\"b\\n"')
    expect(quoted('x'.repeat(120))).toBe(`"${'x'.repeat(120)}"`)
    expect(quoted('x'.repeat(121))).toBe(`"${'x'.repeat(120)}…" (121 characters)`)
    // Code points, not UTF-16 units: an emoji is never split into a lone surrogate.
    expect(quoted('😀'.repeat(121))).toBe(`"${'😀'.repeat(120)}…" (121 characters)`)
  })
})

describe('aborted', () => {
  it('the host\'s TOOL_ABORTED code, named AbortError, with the given message', () => {
    const error = aborted('stopped waiting')
    expect([error.name, error.message, (error as { code?: unknown }).code]).toEqual(['AbortError', 'stopped waiting', TOOL_ABORTED])
    expect(aborted().message).toBe('tool call aborted')
  })
})
