/** wait_for: each piece of a shell's log (both streams, from its start) looked at once, line by line, as it is written. */
import { StringDecoder } from 'node:string_decoder'
import type { BackgroundShell } from '../shells/shell.ts'
import type { ShellSnapshot } from '../contract.ts'
import type { LinePattern } from './line-pattern.ts'

/** Characters of a line matched (the rest is ignored); lines shown when nothing matched, and characters of each. */
const MAX_LINE = 4096
const TAIL_LINES = 10
const MAX_TAIL_LINE = 300

/** 'capped' / 'log-failed': the log stopped taking output, so no later line can match (the shell keeps running). */
type WaitResult = {
  wait: 'matched' | 'exited' | 'timeout' | 'capped' | 'log-failed'
  matched_line?: string
  last_lines: string[]
  ended?: ShellSnapshot
  log_problem?: string
}

class Lines {
  private readonly decoder = new StringDecoder('utf8')
  private partial = ''
  private readonly tail: string[] = []
  matched: string | undefined

  constructor(private readonly pattern: LinePattern) {}

  /** True once a complete line matched. */
  feed(bytes: Buffer): boolean {
    if (this.matched !== undefined) return true
    const text = this.partial + this.decoder.write(bytes)
    let start = 0
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      const line = text.slice(start, Math.min(end, start + MAX_LINE)).replace(/\r$/, '')
      start = end + 1
      if (this.pattern.test(line)) {
        this.matched = line
        return true
      }
      this.tail.push(line.length > MAX_TAIL_LINE ? `${line.slice(0, MAX_TAIL_LINE)}…` : line)
      if (this.tail.length > TAIL_LINES) this.tail.shift()
    }
    // A line without its newline yet: keep (at most) what is matched of it.
    this.partial = text.slice(start, start + MAX_LINE)
    return false
  }

  last(): string[] {
    const whole = this.partial.replace(/\r$/, '')
    const pending = whole.length > MAX_TAIL_LINE ? `${whole.slice(0, MAX_TAIL_LINE)}…` : whole
    return pending === '' ? [...this.tail] : [...this.tail, pending].slice(-TAIL_LINES)
  }
}

/** Rejects with `aborted()` when `signal` aborts; the shell keeps running. */
export function waitForLine(
  shell: Pick<BackgroundShell, 'watchOutput' | 'settled'>, pattern: LinePattern, timeoutMs: number, signal: AbortSignal, aborted: () => Error,
): Promise<WaitResult> {
  const lines = new Lines(pattern)
  return new Promise<WaitResult>((resolve, reject) => {
    // The first end wins; later calls find the promise settled and the watch already stopped.
    const finish = (result: WaitResult | Error) => {
      stop()
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onAbort = () => finish(aborted())
    const stop = shell.watchOutput((written) => {
      if (lines.feed(written)) finish({ wait: 'matched', matched_line: lines.matched ?? '', last_lines: [] })
    }, (ended) => finish(ended.end === 'capped'
      ? { wait: 'capped', last_lines: lines.last() }
      : { wait: 'log-failed', last_lines: lines.last(), log_problem: ended.problem }))
    const timer = setTimeout(() => finish({ wait: 'timeout', last_lines: lines.last() }), timeoutMs)
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    void shell.settled.then((record) => finish({ wait: 'exited', last_lines: lines.last(), ended: record }))
  })
}
