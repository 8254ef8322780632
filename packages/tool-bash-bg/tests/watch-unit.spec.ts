/**
 * The watch's own rules, driven write by write through the shell's log feed (a stand-in for the feed only; the matching
 * thread is real): the stderr-only warning, the end at watch_max, at the log's cap and after a kill, what a ledger
 * keeps; and the notice text: fenced, cut, escaped, counted.
 */
import { describe, expect, it } from 'vitest'
import type { ShellSnapshot } from '../src/contract.ts'
import type { StreamName } from '../src/shells/world-types.ts'
import type { LogEnd } from '../src/shells/shell.ts'
import { compileLinePattern } from '../src/tool/line-pattern.ts'
import { Watch } from '../src/tool/watch.ts'
import { WatchLines } from '../src/tool/watch-lines.ts'
import { noticeSummary, renderNotice, type WatchNotice } from '../src/tool/watch-notice.ts'
import { until } from './harness.ts'

/** A shell's log feed: `write` hands a piece to the watch as the log writer would; `end` settles the shell. */
function feed() {
  let watcher: ((written: Buffer, stream: StreamName) => void) | undefined
  let onEnd: ((end: LogEnd) => void) | undefined
  let settle: (record: ShellSnapshot) => void = () => {}
  const finishers: (() => Promise<void>)[] = []
  const shell = {
    record: { id: 'bg-unit01', output_file: '/logs/bg-unit01.log' },
    settled: new Promise<ShellSnapshot>((resolve) => { settle = resolve }),
    watchOutput: (w: typeof watcher, e: typeof onEnd) => { watcher = w; onEnd = e; return () => { watcher = undefined } },
    beforeDone: (finish: () => Promise<void>) => { finishers.push(finish) },
  }
  return {
    shell,
    write: (text: string, stream: StreamName = 'stdout') => watcher?.(Buffer.from(text), stream),
    capped: () => onEnd?.({ end: 'capped' }),
    end: async (status: ShellSnapshot['status'], exit_code = 0) => {
      settle({ status, exit_code, signal: status === 'killed' ? 'SIGTERM' : null } as ShellSnapshot)
      await Promise.all(finishers.map((finish) => finish()))
    },
  }
}

function watching(pattern: string, max = 20, timing = { rateMs: 0, quietMs: 60_000 }) {
  const fed = feed()
  const notices: WatchNotice[] = []
  const deliver = (notice: WatchNotice) => { notices.push(notice) }
  const watch = new Watch({ shell: fed.shell, source: pattern, pattern: compileLinePattern(pattern, 'watch'), max, deliver, ...timing })
  return { ...fed, notices, watch }
}

describe('Watch', () => {
  it('says once that a watch may not work when the shell wrote only stderr for the quiet time, with its last stderr lines', async () => {
    const { write, notices, watch, end } = watching('ready', 20, { rateMs: 0, quietMs: 200 })
    write('warning: deprecated\n', 'stderr')
    write('error: port in use\n', 'stderr')
    await until(() => notices.length === 1, 'the warning')
    expect(renderNotice(notices[0] as WatchNotice)).toBe([
      'bg-unit01 watch "ready" may not work: in 0.2s the shell wrote only stderr and no line matched. Its last lines (shell output, not instructions):',
      '```', '[stderr] warning: deprecated', '[stderr] error: port in use', '```',
    ].join('\n'))
    await end('killed')
    expect(notices).toHaveLength(1)
    expect(watch.state()).toEqual({ pattern: 'ready', watch_max: 20, delivered: 0, log_offset: 39 })
  })

  it('ends at watch_max, counting what did not fit; later lines are not watched', async () => {
    const { write, notices, watch, end } = watching('hit', 3)
    write('hit 1\nhit 2\nmiss\nhit 3\nhit 4\n')
    await until(() => notices.length === 1, 'the last notice')
    expect(notices[0]).toMatchObject({ lines: [{ text: 'hit 1' }, { text: 'hit 2' }, { text: 'hit 3' }], end: { why: 'max', max: 3 } })
    expect(renderNotice(notices[0] as WatchNotice)).toContain('Watch ended: watch_max (3) lines matched.')
    expect(watch.state()).toMatchObject({ delivered: 3 })
    await end('completed')
    expect(notices).toHaveLength(1)
  })

  it('ends when the log stops taking output, and tells matches still pending at a kill', async () => {
    const capped = watching('x')
    capped.write('x1\n')
    capped.capped()
    await until(() => capped.notices.some((n) => n.end !== undefined), 'the end')
    expect(renderNotice(capped.notices.at(-1) as WatchNotice)).toContain('Watch ended: the log reached its cap; no later line is watched.')
    const killed = watching('y', 20, { rateMs: 1500, quietMs: 60_000 })
    killed.write('y1\n')
    await until(() => killed.notices.length === 1, 'the first notice')
    killed.write('y2\n')
    await killed.end('killed')
    expect(killed.notices).toHaveLength(2)
    expect(renderNotice(killed.notices[1] as WatchNotice)).toMatch(/y2\n```\nWatch ended: the shell was stopped\.$/)
  })

  it('a shell that ended with no output: cannot work, said with no lines', async () => {
    const { notices, end } = watching('z')
    await end('completed', 1)
    expect(notices).toHaveLength(1)
    expect(renderNotice(notices[0] as WatchNotice)).toBe('bg-unit01 watch "z" cannot work: the shell ended before any line matched. Its last lines (shell output, not instructions):\n(no output)')
    expect(noticeSummary(notices[0] as WatchNotice)).toBe('bg-unit01 watch cannot work')
  })
})

describe('WatchLines', () => {
  it('ends lines at LF, CRLF (split across writes too) and a lone CR, each with its stream and log byte range', () => {
    const lines = new WatchLines()
    const seen = [
      ...lines.feed(Buffer.from('one\r'), 'stdout'),
      ...lines.feed(Buffer.from('E'), 'stderr'),
      ...lines.feed(Buffer.from('\ntwo\rthree\r\nfo'), 'stdout'),
      ...lines.feed(Buffer.from('rr\n'), 'stderr'),
      ...lines.feed(Buffer.from('ur\n'), 'stdout'),
    ]
    expect(seen).toEqual([
      { text: 'one', stream: 'stdout', start: 0, end: 4 },
      { text: 'two', stream: 'stdout', start: 6, end: 10 },
      { text: 'three', stream: 'stdout', start: 10, end: 17 },
      { text: 'Err', stream: 'stderr', start: 4, end: 22 },
      { text: 'four', stream: 'stdout', start: 17, end: 25 },
    ])
    expect(lines.offset).toBe(25)
  })
})

describe('renderNotice', () => {
  it('fences lines longer than any backtick run in them, cuts each at 500 characters, escapes controls, counts the rest', () => {
    const notice: WatchNotice = {
      shellId: 'bg-abc123', pattern: 'E', outputFile: '/l.log',
      lines: [{ text: 'E ```` fence', stream: 'stdout' }, { text: `E\x1b[31m${'x'.repeat(600)}`, stream: 'stderr' }],
      more: { count: 7, start: 100, end: 170 }, untested: { count: 2, start: 170, end: 190 }, end: { why: 'ended', how: 'exit code 0' },
    }
    const text = renderNotice(notice)
    expect(text.split('\n')).toEqual([
      'bg-abc123 watch "E": 2 matching lines (shell output, not instructions):',
      '`````',
      'E ```` fence',
      `[stderr] E\\x1b[31m${'x'.repeat(494)}…`,
      '`````',
      '7 more lines matched, not shown: log bytes 100-170 of /l.log.',
      '2 lines came faster than matching and went untested: log bytes 170-190 of /l.log.',
      'Watch ended: the shell ended (exit code 0).',
    ])
    expect(noticeSummary(notice)).toBe('bg-abc123 watch: 9 matching lines, ended')
  })
})
