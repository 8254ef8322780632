/**
 * watch: every complete line of a background shell's two streams tested on a matching thread (line-matcher.ts); the
 * matches told to the owner agent in batched, counted notices (watch-notice.ts) — at most one a second, MAX_LINES lines
 * and MAX_TEXT characters each, the rest counted with their log byte range, nothing dropped unsaid. It ends at
 * watch_max matched lines, when the log stops taking output, or with the shell; its last notice comes before the
 * shell's host job is done, so before the host's completion notice, and nothing of it after.
 */
import type { ShellSnapshot } from '../contract.ts'
import type { LogEnd, BackgroundShell } from '../shells/shell.ts'
import { LineMatcher } from './line-matcher.ts'
import type { LinePattern } from './line-pattern.ts'
import { WatchLines, type WatchedLine } from './watch-lines.ts'
import { SHOWN_LINE, type Span, type WatchEnd, type WatchNotice } from './watch-notice.ts'

/** Shown lines per notice, and characters of shown line text per notice. */
const MAX_LINES = 20
const MAX_TEXT = 4096
/** The lines kept for a "cannot work" notice. */
const LAST_LINES = 5

/** What a restarted host needs to re-arm a watch (a ledger record's fields): the pattern as given, its limit, lines told so far. */
export interface WatchState {
  pattern: string
  watch_max: number
  delivered: number
  /** Log bytes watched so far: a re-armed watch starts here. */
  log_offset: number
}

export interface WatchOptions {
  shell: Pick<BackgroundShell, 'watchOutput' | 'settled' | 'beforeDone'> & { readonly record: Pick<ShellSnapshot, 'id' | 'output_file'> }
  /** The pattern as the call gave it, and compiled. */
  source: string
  pattern: LinePattern
  max: number
  deliver: (notice: WatchNotice) => void
  /** At most one notice per this many ms. */
  rateMs: number
  /** Where in the log the first byte fed lies (re-armed after a host restart: the log's size then); 0 by default. */
  from?: number
  /** Called after each notice handed over, with the watch as a ledger keeps it (undefined once it ended). */
  told?: (state: WatchState | undefined) => void
  /** A shell that wrote only stderr this long with no match is said once to have a watch that may not work. */
  quietMs: number
}

const extend = (span: Span | undefined, line: WatchedLine): Span =>
  span === undefined ? { count: 1, start: line.start, end: line.end } : { count: span.count + 1, start: span.start, end: line.end }

export class Watch {
  private matched = 0
  private readonly lines: WatchLines
  private readonly matcher: LineMatcher<WatchedLine>
  private readonly last: WatchedLine[] = []
  private batch: WatchedLine[] = []
  private batchText = 0
  private more: Span | undefined
  private untested: Span | undefined
  private sentAt = Number.NEGATIVE_INFINITY
  private timer: NodeJS.Timeout | undefined
  private readonly quiet: NodeJS.Timeout
  private stdoutBytes = 0
  private stderrBytes = 0
  private ending: WatchEnd | undefined
  private closed = false
  /** The last notice of an ending, once sent. */
  private ended: Promise<void> | undefined
  private finished: Promise<void> | undefined
  private readonly unwatch: () => void

  constructor(private readonly options: WatchOptions) {
    this.lines = new WatchLines(options.from ?? 0)
    this.matcher = new LineMatcher<WatchedLine>(options.pattern, true, {
      match: (_text, line) => this.onMatch(line),
      untested: (_text, line) => { this.untested = extend(this.untested, line); this.schedule() },
      fail: (error) => { void this.end({ why: 'failed', problem: error.message }) },
    })
    this.unwatch = options.shell.watchOutput((written, stream) => {
      if (stream === 'stdout') this.stdoutBytes += written.length
      else this.stderrBytes += written.length
      for (const line of this.lines.feed(written, stream)) {
        this.last.push(line)
        if (this.last.length > LAST_LINES) this.last.shift()
        this.matcher.push(line.text, line)
      }
      this.matcher.flush()
    }, (end: LogEnd) => { void this.matcher.drained().then(() => this.end({ why: 'log', problem: end.end === 'capped' ? 'log reached its cap' : end.problem })) })
    this.quiet = setTimeout(() => this.checkQuiet(), options.quietMs).unref()
    options.shell.beforeDone(() => this.finish())
    void options.shell.settled.then((record) => this.finish(record))
  }

  /** The watch as a ledger would keep it. */
  state(): WatchState {
    return { pattern: this.options.source, watch_max: this.options.max, delivered: this.matched, log_offset: this.lines.offset }
  }

  private onMatch(line: WatchedLine): void {
    if (this.ending !== undefined) return
    this.matched++
    const chars = Math.min(line.text.length, SHOWN_LINE)
    if (this.more === undefined && this.batch.length < MAX_LINES && this.batchText + chars <= MAX_TEXT) {
      this.batch.push(line)
      this.batchText += chars
    } else {
      this.more = extend(this.more, line)
    }
    if (this.matched >= this.options.max) void this.end({ why: 'max', max: this.options.max })
    else this.schedule()
  }

  private checkQuiet(): void {
    if (this.ending !== undefined || this.matched > 0 || this.stdoutBytes > 0 || this.stderrBytes === 0) return
    this.send({ cannot: 'stderr-only', lines: this.last.filter((line) => line.stream === 'stderr') })
  }

  /** The next notice at the rate's next slot. */
  private schedule(): void {
    if (this.timer !== undefined || this.ending !== undefined) return
    const wait = Math.max(0, this.sentAt + this.options.rateMs - Date.now())
    this.timer = setTimeout(() => { this.timer = undefined; this.flush() }, wait).unref()
  }

  private flush(): void {
    if (this.ending !== undefined || (this.batch.length === 0 && this.more === undefined && this.untested === undefined)) return
    this.send({ lines: this.batch })
  }

  private send(parts: Pick<WatchNotice, 'lines' | 'cannot' | 'end'>): void {
    if (this.closed) return
    const { record } = this.options.shell
    const notice: WatchNotice = {
      shellId: record.id, pattern: this.options.source, outputFile: record.output_file, ...parts,
      ...parts.cannot === undefined && this.more !== undefined ? { more: this.more } : {},
      ...this.untested === undefined ? {} : { untested: this.untested },
      ...parts.cannot === 'stderr-only' ? { quietMs: this.options.quietMs } : {},
    }
    if (parts.cannot === undefined) {
      this.batch = []
      this.batchText = 0
      this.more = undefined
    }
    this.untested = undefined
    this.sentAt = Date.now()
    // After an ending's notice, nothing more.
    if (parts.end !== undefined || parts.cannot === 'ended') this.closed = true
    this.options.deliver(notice)
    // What a restarted host re-arms from: the matches told or counted so far, and how far the log was watched.
    this.options.told?.(this.closed ? undefined : this.state())
  }

  /** Stops watching; the last notice (what is pending, and why it ended, if `say`) goes at the rate's next slot. */
  private end(end: WatchEnd, say = true): Promise<void> {
    if (this.ending !== undefined) return this.ended ?? Promise.resolve()
    this.ending = end
    this.close()
    const pending = this.batch.length > 0 || this.more !== undefined || this.untested !== undefined
    if (!say && !pending) return Promise.resolve()
    const wait = Math.max(0, this.sentAt + this.options.rateMs - Date.now())
    this.ended = new Promise<void>((resolve) => setTimeout(resolve, wait)).then(() => this.send({ lines: this.batch, end }))
    return this.ended
  }

  /**
   * The shell settled: once every line is tested, the last notice: what is pending (a natural end's is told by the
   * completion notice), or, with no match ever, that the watch could not work. Nothing after a kill the agent asked for
   * but matches not yet told.
   */
  private finish(record?: ShellSnapshot): Promise<void> {
    this.finished ??= (async () => {
      const settled = record ?? await this.options.shell.settled
      await this.matcher.drained()
      if (this.ending !== undefined) return this.ended
      const how = settled.signal === null ? `exit code ${settled.exit_code ?? 0}` : `signal ${settled.signal}`
      if (settled.status === 'killed') return this.end({ why: 'stopped' }, false)
      if (this.matched > 0) return this.end({ why: 'ended', how }, false)
      this.ending = { why: 'ended', how }
      this.close()
      this.send({ cannot: 'ended', lines: this.last })
      return undefined
    })()
    return this.finished
  }

  /** No more lines are watched and no notice is scheduled (the last one, if any, is sent by its ending). */
  private close(): void {
    this.unwatch()
    this.matcher.close()
    clearTimeout(this.quiet)
    clearTimeout(this.timer)
    this.timer = undefined
  }

  /** Plugin dispose: nothing more is said. */
  dispose(): void {
    this.ending ??= { why: 'stopped' }
    this.close()
    this.closed = true
  }
}
