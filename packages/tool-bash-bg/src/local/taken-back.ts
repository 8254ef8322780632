// A shell taken back at resume from the keeper of a host that is gone: the keeper holds it back from its TTL while this
// host lives (keeper-adopt.ts); this host watches its processes as a ProcessGroup over the running group (its leader's
// end is the keeper's `ended`, its status the keeper's exit file) and reads its log from the file the keeper writes
// (polled; each new piece with its stream from the sidecar), continuing where the log is, with no gap.
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { shellCgroup } from './cgroup.ts'
import { adoptShell, type AdoptedShell } from './keeper-adopt.ts'
import type { LedgerRecord } from './ledger.ts'
import { logProblem, type StreamName } from './log-writer.ts'
import { HOST_MARK, SHELL_MARK, type ProcessCensus } from './proc-census.ts'
import { ProcessGroup, type GroupStop } from './process-group.ts'
import { StreamPieces } from './stream-pieces.ts'
import { streamRuns } from './stream-runs.ts'
import type { LocalSyscalls } from './syscalls.ts'

/** How often a taken-back shell's log is looked at for new output. */
const POLL_MS = 100

/** What the keeper's exit file says of the end (keeper-protocol.ts ExitRecord). */
function exitOf(file: string): { code: number | null, signal: NodeJS.Signals | null } {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { code?: unknown, signal?: unknown }
    return { code: typeof parsed.code === 'number' ? parsed.code : null, signal: typeof parsed.signal === 'string' ? parsed.signal as NodeJS.Signals : null }
  } catch {
    return { code: null, signal: null }
  }
}

/** The log a keeper writes, as this host sees it grow. */
class FileFeed {
  bytes: number
  capped = false
  readonly failure: string | undefined = undefined
  lastOutputAt: number | undefined
  readonly watchers = new Set<(written: Buffer, stream: StreamName) => void>()
  readonly enders = new Set<() => void>()
  private readonly fd: number | undefined
  private readonly timer: NodeJS.Timeout
  private done = false
  /** Each stream's bytes since the take-back (a re-registered job's per-stream sources start there). */
  private readonly kept = new StreamPieces()

  constructor(
    readonly path: string, private readonly streams: string, private readonly maxLogBytes: number, private readonly ended: Promise<void>,
  ) {
    let fd: number | undefined
    try {
      fd = openSync(path, 'r')
    } catch {}
    this.fd = fd
    // What was written while no host ran is in the log already: a reader starts from it, a watcher from here on.
    const stat = fd === undefined ? undefined : fstatSync(fd)
    this.bytes = stat?.size ?? 0
    this.lastOutputAt = stat === undefined || stat.size === 0 ? undefined : stat.mtimeMs
    this.capped = this.bytes >= maxLogBytes
    this.timer = setInterval(() => this.poll(), POLL_MS).unref()
    void ended.then(() => {
      this.poll()
      this.done = true
    })
  }

  private poll(): void {
    if (this.fd === undefined || this.capped) return
    const size = fstatSync(this.fd).size
    if (size <= this.bytes) return
    const piece = Buffer.alloc(size - this.bytes)
    readSync(this.fd, piece, 0, piece.length, this.bytes)
    const from = this.bytes
    this.bytes = size
    this.lastOutputAt = Date.now()
    for (const run of streamRuns(this.streams, from, size)) {
      const part = piece.subarray(run.start - from, run.end - from)
      this.kept.note(run.stream, run.start, part.length)
      for (const watcher of this.watchers) watcher(part, run.stream)
    }
    if (size >= this.maxLogBytes) {
      this.capped = true
      for (const ender of this.enders) ender()
    }
  }

  /** Where `stream`'s bytes since the take-back, from `from` (its own offset), at most `limit`, lie in the log. */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[] {
    return this.kept.pieces(stream, from, limit)
  }

  problem(): string | undefined {
    return logProblem(this.path, this.fd)
  }

  async drained(ms: number): Promise<boolean> {
    if (this.done) return true
    const timeout = new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())
    const drained = await Promise.race([this.ended.then(() => true), timeout])
    this.poll()
    return drained
  }

  close(): void {
    clearInterval(this.timer)
    if (this.fd !== undefined) closeSync(this.fd)
  }
}

/** The leader of a taken-back shell: its end is its keeper's word (or, with the keeper gone, its pid no longer its own). */
class TakenLeader {
  private listeners = new Set<(code: number | null, signal: NodeJS.Signals | null) => void>()
  private exit: { code: number | null, signal: NodeJS.Signals | null } | undefined

  constructor(readonly pid: number, readonly start: number, adopted: AdoptedShell, exitFile: string) {
    void adopted.ended.then(() => this.exited(exitOf(exitFile)))
  }

  private exited(exit: { code: number | null, signal: NodeJS.Signals | null }): void {
    if (this.exit !== undefined) return
    this.exit = exit
    for (const listener of this.listeners) listener(exit.code, exit.signal)
    this.listeners.clear()
  }

  once(_event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this {
    if (this.exit === undefined) this.listeners.add(listener)
    else listener(this.exit.code, this.exit.signal)
    return this
  }
}

/** A shell taken back: its processes, its log, and (for the ledger) the facts it had. */
export interface TakenShell {
  processes: ProcessGroup
  log: FileFeed
  release(): void
  facts: { pidStart: number, pidns: string, cgroup?: string, keeper?: { pid: number, start: number, socket?: string } }
}

/**
 * Take `record`'s shell back from its keeper: undefined when the keeper does not hold it (ended meanwhile, or gone) or
 * names another process. Its marks are its own: its id, and the host that started it (its log directory's name).
 */
export async function takeBack(
  record: LedgerRecord, maxLogBytes: number, parts: { census: ProcessCensus, sys: LocalSyscalls, stop: GroupStop },
): Promise<TakenShell | undefined> {
  const socket = record.keeper?.socket
  if (socket === undefined) return undefined
  const adopted = await adoptShell(socket, record.shellId)
  if (adopted === undefined) return undefined
  if (adopted.pid !== record.pid || adopted.start !== record.pidStart) {
    adopted.release()
    return undefined
  }
  const { census, sys, stop } = parts
  const cgroup = record.cgroup === undefined ? undefined
    : shellCgroup(sys, sys.mtime(join(record.cgroup, 'cgroup.events')) === undefined ? 'cgroup-v1' : 'cgroup-v2', record.cgroup)
  const marks = [`${SHELL_MARK}=${record.shellId}`, `${HOST_MARK}=${basename(dirname(record.log))}`]
  const leader = new TakenLeader(record.pid, record.pidStart, adopted, record.exitFile)
  const processes = new ProcessGroup(leader, marks, census, stop, cgroup)
  const log = new FileFeed(record.log, record.streams, maxLogBytes, adopted.ended)
  const facts = {
    pidStart: record.pidStart, pidns: record.pidns, ...record.cgroup === undefined ? {} : { cgroup: record.cgroup },
    ...record.keeper === undefined ? {} : { keeper: record.keeper },
  }
  return { processes, log, release: () => {}, facts }
}
