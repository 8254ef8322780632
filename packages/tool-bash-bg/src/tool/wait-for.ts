/**
 * wait_for: each piece of a shell's log (both streams, from its start) cut into lines as it is written, each line
 * tested once on a matching thread (line-matcher.ts); the host's thread only splits lines and keeps the last few.
 */
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { BackgroundShell } from '../shells/shell.ts'
import type { ShellSnapshot } from '../contract.ts'
import { LineMatcher } from './line-matcher.ts'
import type { LinePattern } from './line-pattern.ts'
import { OutputLines } from './output-lines.ts'

/** Lines shown when nothing matched, and characters of each. */
const TAIL_LINES = 10
const MAX_TAIL_LINE = 300

/**
 * 'capped' / 'log-failed': the log stopped taking output, so no later line can match (the shell keeps running).
 * `untested_lines`: lines that came while matching was too far behind, never tested.
 */
type WaitResult = {
  wait: 'matched' | 'exited' | 'timeout' | 'capped' | 'log-failed'
  matched_line?: string
  last_lines: string[]
  ended?: ShellSnapshot
  log_problem?: string
  untested_lines?: number
}

/** The last TAIL_LINES lines, each cut for showing. */
class Tail {
  private readonly lines: string[] = []

  push(line: string): void {
    this.lines.push(shown(line))
    if (this.lines.length > TAIL_LINES) this.lines.shift()
  }

  last(pending: string): string[] {
    return pending === '' ? [...this.lines] : [...this.lines, shown(pending)].slice(-TAIL_LINES)
  }
}

const shown = (line: string): string => line.length > MAX_TAIL_LINE ? `${line.slice(0, MAX_TAIL_LINE)}…` : line

/** Rejects with `aborted()` when `signal` aborts; the shell keeps running. */
export function waitForLine(
  shell: Pick<BackgroundShell, 'watchOutput' | 'settled'>, pattern: LinePattern, timeoutMs: number, signal: AbortSignal, aborted: () => Error,
): Promise<WaitResult> {
  const lines = new OutputLines()
  const tail = new Tail()
  const last = () => tail.last(lines.pending())
  return new Promise<WaitResult>((resolve, reject) => {
    let done = false
    const matcher = new LineMatcher(pattern, false, {
      match: (line) => finish({ wait: 'matched', matched_line: line, last_lines: [] }),
      fail: (error) => finish(new HarnessError(
        `wait_for stopped: its matching thread failed (${error.message}); the shell keeps running`, 'WAIT_FAILED',
      )),
    })
    // The first end wins; later calls find the promise settled and the watch already stopped.
    const finish = (result: WaitResult | Error) => {
      if (done) return
      done = true
      stop()
      matcher.close()
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      if (result instanceof Error) reject(result)
      else resolve(matcher.untested > 0 && result.wait !== 'matched' ? { ...result, untested_lines: matcher.untested } : result)
    }
    // An end of the output decides only once every line before it has been tested (the timeout still ends the wait).
    const afterLines = (result: () => WaitResult) => { void matcher.drained().then(() => finish(result())) }
    const onAbort = () => finish(aborted())
    const stop = shell.watchOutput((written) => {
      for (const line of lines.feed(written)) {
        tail.push(line)
        matcher.push(line)
      }
      matcher.flush()
    }, (ended) => afterLines(() => ended.end === 'capped'
      ? { wait: 'capped', last_lines: last() }
      : { wait: 'log-failed', last_lines: last(), log_problem: ended.problem }))
    const timer = setTimeout(() => finish({ wait: 'timeout', last_lines: last() }), timeoutMs)
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    void shell.settled.then((record) => afterLines(() => ({ wait: 'exited', last_lines: last(), ended: record })))
  })
}
