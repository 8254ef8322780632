/**
 * One background shell: a detached process group writing to a capped log (locally its keeper writes it), watched until
 * all of it is gone; it settles once, or is let go at host exit when kept (keepOnExit), its keeper guarding it.
 */
import { closeSync, openSync, readSync } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'
import type { KillOutcome, KillRequest, Launch, ShellSnapshot } from '../contract.ts'
import type { LedgerRecord } from '../local/ledger.ts'
import type { OutputRead, ShellJobHooks, ShellJobOutcome } from './jobs-adapter.ts'
import { causeOf, type StopCause } from './completions.ts'
import { KILL_POLICY } from './kill-policy.ts'
import type { LogFeed, LogWatcher, ShellFacts, ShellFiles, ShellProcesses, ShellWorld, StartedShell, StreamName } from './world-types.ts'

const escalates = (kill: KillRequest) => kill.force || kill.signal === 'SIGKILL'

/** `cancelRequest`: what the job's cancel carries out (a pending stop's, else a bare job_kill's); `toolName`: for messages. */
export interface ShellInit {
  toolName: string
  id: string
  command: string
  owner: string
  launch: Launch
  world: ShellWorld
  outputFile: string
  maxLogBytes: number
  cancelRequest: () => KillRequest
  /** The sidecar, the exit file, the TTL and ledger record (the registry's plan; a direct start gets defaults). */
  files?: Pick<ShellFiles, 'streams' | 'exitFile' | 'ttlMs' | 'ledger'>
  /** keepOnExit: a host job cancelled by the host's teardown lets the shell go running instead of stopping it. */
  keepOnTeardown?: boolean
  /** Called as the host job's `done` is about to settle with the shell's end (the completion notice's hold). */
  beforeDone?: () => void
  /** When it started, for a shell taken back at resume (else now). */
  startedAt?: number
  /** Keep where each stream's bytes lie in the log (a host that reads each stream as its own source). */
  streams?: boolean
}

/** Why a log stopped taking output. */
export type LogEnd = { end: 'capped' } | { end: 'log-failed', problem: string }

type ShellRecord = { -readonly [K in keyof ShellSnapshot]: ShellSnapshot[K] }

export class BackgroundShell {
  /** Live and mutable: it never leaves this package (reads get `snapshot()`). */
  readonly record: ShellRecord
  readonly processes: ShellProcesses
  readonly settled: Promise<ShellSnapshot>
  /** The job's end: the shell's, or the host letting it go running at its exit (keepOnExit), whichever comes first. */
  private readonly done: Promise<ShellJobOutcome>
  private release: (outcome: ShellJobOutcome) => void = () => {}
  private readonly writer: LogFeed
  private termination: { request: KillRequest, outcome: Promise<KillOutcome> } | undefined
  /** Who stopped it, when something did: decides whether its completion is still to be told. */
  stopCause: StopCause | undefined
  private killSignal: string | undefined
  private cursor = 0
  private readonly decoder = new StringDecoder('utf8')
  /** What the ledger records of its processes (a local shell's). */
  readonly facts: ShellFacts | undefined
  /** Its watch as the ledger keeps it (set by the tool when armed and at each notice). */
  watching: LedgerRecord['watch']
  /** Awaited after the shell settled and before its host job's `done`: what must be said before the completion notice. */
  private readonly finishers = new Set<() => Promise<void>>()
  private saying: Promise<void> | undefined

  /** Start the world's command and its log, then the shell; rejects when nothing started. */
  static async start(init: ShellInit): Promise<BackgroundShell> {
    return new BackgroundShell(init, await init.world.start(init.launch, init.id, BackgroundShell.files(init)))
  }

  static files(init: ShellInit): ShellFiles {
    const { outputFile, maxLogBytes, toolName, files } = init
    return {
      log: outputFile, streams: files?.streams ?? outputFile.replace(/\.log$/, '.streams'), exitFile: files?.exitFile ?? '', maxLogBytes, toolName,
      ttlMs: files?.ttlMs ?? 0, ...files?.ledger === undefined ? {} : { ledger: files.ledger },
      ...init.streams === true ? { pieces: true } : {},
    }
  }

  /** Takes a started shell over (a host job's `run` makes it at once); `moved`: a foreground run that outgrew its timeout. */
  constructor(private readonly init: ShellInit, started: StartedShell, moved = false) {
    this.writer = started.log
    this.processes = started.processes
    this.facts = started.facts
    // A moved foreground run: what its value showed is not new output for the host job's reader.
    if (moved) this.cursor = this.writer.bytes
    // A running shell must not keep the host alive: exit handlers kill it instead.
    started.release()
    this.record = {
      id: init.id, pid: this.processes.pid, command: init.command, cwd: init.launch.cwd, owner: init.owner,
      started_at: new Date(init.startedAt ?? Date.now()).toISOString(), status: 'running', exit_code: null, signal: null, leader_exited_at: null, ended_at: null,
      output_file: init.outputFile, bytes: 0, capped: false, last_output_at: null, processes: 1,
      ...init.world.limits === undefined ? {} : { world_limits: init.world.limits },
    }
    this.settled = this.watch()
    this.done = new Promise((resolve) => {
      this.release = resolve
      void this.settled.then(() => {
        const finish = () => {
          this.init.beforeDone?.()
          resolve(this.outcome())
        }
        // With nothing to say first (a watch's last lines), done settles in the shell's own turn.
        if (this.finishers.size === 0) finish()
        else void this.said().then(finish)
      })
    })
  }

  private async watch(): Promise<ShellSnapshot> {
    const exit = await this.processes.exited
    this.record.exit_code = exit.code
    this.record.signal = exit.signal
    this.record.leader_exited_at = exit.at.toISOString()
    await this.processes.whenEmpty(Number.POSITIVE_INFINITY)
    await this.writer.drained(KILL_POLICY.drainMs)
    // An end first read from the leader's zombie is corrected in place by its parent's word, which comes before the drain.
    this.record.exit_code = exit.code
    this.record.signal = exit.signal
    this.writer.close()
    this.sync()
    // A shell whose log could not be written ended in error: its output is incomplete.
    this.record.status = this.killSignal !== undefined || exit.signal !== null ? 'killed' : this.record.log_problem === undefined ? 'completed' : 'error'
    this.record.ended_at = new Date().toISOString()
    // The log was looked at a moment ago (sync): the end's snapshot need not look again.
    return Object.freeze({ ...this.record })
  }

  private sync(): void {
    this.record.bytes = this.writer.bytes
    this.record.capped = this.writer.capped
    const last = this.writer.lastOutputAt
    this.record.last_output_at = last === undefined ? null : new Date(last).toISOString()
    this.record.processes = this.processes.live
    this.noteLogProblem()
  }

  /** Looked at on every read, after the end too: a log removed later is said as well. */
  private noteLogProblem(): void {
    const problem = this.writer.problem()
    if (problem !== undefined) this.record.log_problem = problem
    else delete this.record.log_problem
  }

  /** The shell as it is now: a fresh frozen copy. */
  snapshot(): ShellSnapshot {
    if (this.record.ended_at === null) this.sync()
    else this.noteLogProblem()
    return Object.freeze({ ...this.record })
  }

  get running(): boolean {
    return this.record.status === 'running'
  }

  /** Whether `request`, made now, would share the kill under way rather than send anything itself. */
  joins(request: KillRequest): boolean {
    const current = this.termination
    return current !== undefined && (escalates(current.request) || !escalates(request))
  }

  /**
   * A request during a kill shares it, unless it asks for more (force, SIGKILL): then it runs after, if anything
   * survived. `urgent` (plugin dispose, whose grace bounds every stop) runs now, beside a kill under way, so a long
   * kill_shell wait cannot hold the host's exit.
   */
  terminate(request: KillRequest, urgent = false): Promise<KillOutcome> {
    const current = this.termination
    if (current !== undefined && !urgent) {
      if (this.joins(request)) return current.outcome
      return current.outcome.then((outcome) => outcome.survivors.length === 0 ? outcome : this.terminate(request))
    }
    const kill = async (): Promise<KillOutcome> => {
      const outcome = await this.processes.terminate(request, () => { this.killSignal ??= request.signal })
      if (outcome.survivors.length === 0) await this.settled
      return outcome
    }
    const entry = {
      request,
      outcome: kill().finally(() => { if (this.termination === entry) this.termination = undefined }),
    }
    this.termination = entry
    return entry.outcome
  }

  outcome(): ShellJobOutcome {
    const record = this.record
    const cap = record.capped ? `; log capped at ${record.bytes} bytes` : ''
    const problem = record.log_problem === undefined ? '' : `; ${record.log_problem} at ${record.bytes} bytes`
    if (record.status === 'killed') {
      return { status: 'killed', detail: `signal: ${record.signal ?? this.killSignal ?? 'SIGTERM'}${cap}${problem}` }
    }
    if (record.status === 'error') return { status: 'failed', detail: `exit code: ${record.exit_code ?? 0}${problem}` }
    return { status: 'completed', detail: `exit code: ${record.exit_code ?? 0}${cap}` }
  }

  /** Let go at host exit (keepOnExit): the shell keeps running under its keeper; its job settles now. */
  letGoAtExit(): void {
    this.release({ status: 'killed', detail: 'kept running past the host exit (keepOnExit)' })
  }

  /** Every piece of the log as written (attached in the tick the shell was made: all), and `onEnd` once it stops taking output. */
  watchOutput(watcher: LogWatcher, onEnd: (end: LogEnd) => void = () => {}): () => void {
    const ender = () => onEnd(this.writer.failure === undefined ? { end: 'capped' } : { end: 'log-failed', problem: `log failed (${this.writer.failure})` })
    this.writer.watchers.add(watcher)
    this.writer.enders.add(ender)
    if (this.writer.capped) queueMicrotask(ender)
    return () => {
      this.writer.watchers.delete(watcher)
      this.writer.enders.delete(ender)
    }
  }

  /** Whether something must be said before its end is (a watch's last lines): else its end is told in its own turn. */
  get saysMore(): boolean {
    return this.finishers.size > 0
  }

  /** Once the shell settled and what had to be said before its end (its finishers) was said. */
  said(): Promise<void> {
    this.saying ??= this.settled.then(() => Promise.all([...this.finishers].map((finish) => finish().catch(() => {})))).then(() => {})
    return this.saying
  }

  /** `finish` runs once the shell settled, before its host job is done (so before the host's completion notice). */
  beforeDone(finish: () => Promise<void>): void {
    this.finishers.add(finish)
  }

  /** `length` log bytes from `position`; undefined when the log is gone. */
  private readLog(position: number, length: number): Buffer | undefined {
    const buffer = Buffer.alloc(length)
    try {
      const fd = openSync(this.record.output_file, 'r')
      try {
        readSync(fd, buffer, 0, length, position)
      } finally {
        closeSync(fd)
      }
    } catch {
      return undefined
    }
    return buffer
  }

  /** New log output since the last read, at most the newest `limit` bytes. */
  readOutput(limit: number): string {
    const end = this.writer.bytes
    if (end <= this.cursor) return ''
    const skipped = Math.max(0, end - this.cursor - limit)
    if (skipped > 0) this.decoder.end()
    const buffer = this.readLog(this.cursor + skipped, end - this.cursor - skipped)
    this.cursor = end
    // The log is gone (removed by someone, or pruned): said once, then nothing more to read.
    if (buffer === undefined) return `[${this.init.toolName}: ${this.record.output_file} was removed; its output cannot be read]\n`
    if (skipped === 0) return this.decoder.write(buffer)
    // A skip can land inside a UTF-8 sequence: drop its continuation bytes rather than decode them as U+FFFD.
    let start = 0
    while (start < 3 && start < buffer.length && ((buffer[start] ?? 0) & 0xC0) === 0x80) start++
    return `[${skipped + start} earlier bytes skipped; the whole log is ${this.record.output_file}]\n${this.decoder.write(buffer.subarray(start))}`
  }

  /**
   * Bytes from `fromByte`, at most `limit`, ending on a character boundary (a host's pull source): of the log, or, with
   * `stream`, of that stream alone (offsets counted in its own bytes).
   */
  readFrom(fromByte: number, limit: number, stream?: StreamName): OutputRead {
    const spill = this.writer.capped ? {} : { spillPath: this.record.output_file }
    const whole = { at: fromByte, length: Math.min(this.writer.bytes, fromByte + limit) - fromByte }
    const pieces = stream === undefined ? [whole].filter((piece) => piece.length > 0) : this.writer.pieces(stream, fromByte, limit)
    if (pieces.length === 0) return { text: '', nextOffset: fromByte, lossy: false, ...spill }
    const buffers = pieces.map((piece) => this.readLog(piece.at, piece.length))
    if (buffers.some((buffer) => buffer === undefined)) return { text: '', nextOffset: fromByte, lossy: false }
    const buffer = Buffer.concat(buffers as Buffer[])
    // Hold back a UTF-8 sequence cut at the end: the next read starts at its first byte.
    let cut = buffer.length
    for (let back = 1; back <= 3 && back <= buffer.length; back++) {
      const byte = buffer[buffer.length - back] ?? 0
      if ((byte & 0xC0) === 0x80) continue
      const need = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
      if (need > back) cut = buffer.length - back
      break
    }
    return { text: buffer.subarray(0, cut).toString('utf8'), nextOffset: fromByte + cut, lossy: false, ...spill }
  }

  /** Host job hooks. The cancel carries out the registry's pending stop request once; a later cancel is a bare job_kill. */
  hooks(readLimit: number): ShellJobHooks {
    return {
      cancel: (reason) => {
        this.stopCause ??= causeOf(reason)
        if (this.init.keepOnTeardown === true && this.stopCause === 'exit') {
          this.letGoAtExit()
          return
        }
        // cancel must never throw; the shell stays reachable through dispose and exit handlers.
        try {
          this.terminate(this.init.cancelRequest()).catch(() => {})
        } catch {}
      },
      done: this.done,
      readOutput: () => this.readOutput(readLimit),
      readFrom: (fromByte, stream) => this.readFrom(fromByte, readLimit, stream),
    }
  }
}
