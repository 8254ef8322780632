// The host's side of its keeper (keeper.ts): started lazily at the first background shell, detached, with an IPC
// channel that holds neither process open. Each shell's spawn is one request; what the keeper reports of it (output as
// written to the log, the log's stop, the leader's exit, the end of its output) reaches a KeptFeed and a KeptLeader,
// delivered after the current tick so a caller attaching in the tick its spawn resolved sees every piece.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { entryFile } from '@gencode-ai/dsh-tool-common'
import { noLog } from './host-dir.ts'
import type { HostMessage, KeeperMessage, SpawnRequest } from './keeper-protocol.ts'
import { logProblem, type StreamName } from './log-writer.ts'
import { StreamPieces } from './stream-pieces.ts'

/** Node's argv for the keeper: `keeper.js` beside a bundle, or `keeper.ts` bundled from the TypeScript source (tests). */
function keeperArgv(socket: string): string[] {
  return [entryFile(import.meta.url, 'keeper'), socket]
}

/** A kept shell's log as the host sees it: the keeper writes it, this counts it and tells the watchers each piece. */
export class KeptFeed {
  bytes = 0
  capped = false
  failure: string | undefined
  lastOutputAt: number | undefined
  readonly watchers = new Set<(written: Buffer, stream: StreamName) => void>()
  readonly enders = new Set<() => void>()
  /** A read-only descriptor of the log: whether it was removed is its link count. */
  private fd: number | undefined
  private done = false
  private readonly drainers = new Set<() => void>()

  /** With `pieces`: where each stream's bytes lie (host 0.1.7 reads each stream as its own source). */
  private readonly kept: StreamPieces | undefined

  constructor(readonly path: string, pieces = false) {
    this.kept = pieces ? new StreamPieces() : undefined
    try {
      this.fd = openSync(path, 'r')
    } catch {}
  }

  out(chunk: Uint8Array, stream: StreamName, at: number): void {
    // Once the log stopped taking output nothing more is in it.
    if (this.capped) return
    const buffer = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    this.kept?.note(stream, this.bytes, buffer.length)
    this.bytes += buffer.length
    this.lastOutputAt = at
    for (const watcher of this.watchers) watcher(buffer, stream)
  }

  /** Where `stream`'s bytes from `from` (its own offset), at most `limit`, lie in the log; none unless kept. */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[] {
    return this.kept?.pieces(stream, from, limit) ?? []
  }

  stopped(failure: string | undefined): void {
    if (this.capped) return
    this.capped = true
    this.failure = failure
    for (const ender of this.enders) ender()
  }

  /** The keeper read both pipes to their end (or the keeper is gone: nothing more will come). */
  drain(): void {
    this.done = true
    for (const drainer of this.drainers) drainer()
    this.drainers.clear()
  }

  /** True once the keeper said the output ended; false after `ms`. */
  drained(ms: number): Promise<boolean> {
    if (this.done) return Promise.resolve(true)
    return new Promise<boolean>((resolve) => {
      const drainer = () => {
        clearTimeout(timer)
        resolve(true)
      }
      const timer = setTimeout(() => {
        this.drainers.delete(drainer)
        resolve(false)
      }, ms)
      this.drainers.add(drainer)
    })
  }

  problem(): string | undefined {
    return logProblem(this.path, this.fd, this.failure)
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void

/** The leader as the host's ProcessGroup sees it: its exit comes from the keeper, its parent. */
class KeptLeader {
  private exit: { code: number | null, signal: NodeJS.Signals | null } | undefined
  private readonly listeners = new Set<ExitListener>()

  constructor(readonly pid: number, readonly start: number) {}

  once(_event: 'exit', listener: ExitListener): this {
    if (this.exit === undefined) this.listeners.add(listener)
    else listener(this.exit.code, this.exit.signal)
    return this
  }

  exited(code: number | null, signal: string | null): void {
    if (this.exit !== undefined) return
    this.exit = { code, signal: signal as NodeJS.Signals | null }
    for (const listener of this.listeners) listener(code, this.exit.signal)
    this.listeners.clear()
  }
}

/** One shell the keeper started; `said`: which of its last two messages (the leader's exit, the output's end) came. */
export interface KeptHandle {
  leader: KeptLeader
  feed: KeptFeed
  said: { exit: boolean, drained: boolean }
}

type Pending = { resolve: (handle: KeptHandle) => void, reject: (error: Error) => void, request: SpawnRequest, pieces: boolean }

export class KeeperClient {
  private child: ChildProcess | undefined
  private readonly pending = new Map<string, Pending>()
  private readonly shells = new Map<string, KeptHandle>()
  private queue: KeeperMessage[] = []
  private flushing: NodeJS.Immediate | undefined
  /** The keeper's pid while one runs (for the ledger and the host record). */
  pid: number | undefined

  /** `socket`: where the keeper listens for hosts taking shells back ('' for none); `startTime`: a pid's /proc start. */
  constructor(private readonly socket: string, private readonly startTime: (pid: number) => number | undefined) {}

  /** The keeper as the ledger names it: pid, start time, socket. */
  identity(): { pid: number, start: number, socket?: string } | undefined {
    if (this.pid === undefined) return undefined
    return { pid: this.pid, start: this.startTime(this.pid) ?? 0, ...this.socket === '' ? {} : { socket: this.socket } }
  }

  private keeper(): ChildProcess {
    if (this.child?.connected === true) return this.child
    // Its own environment is not the host's: each shell brings its own, and nothing of the host's (a mark a test or a
    // supervisor looks for) should make the keeper look like one of them.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR } }
    const child = spawn(process.execPath, keeperArgv(this.socket), {
      cwd: '/', env, detached: true, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced',
    })
    child.on('message', (message: KeeperMessage) => this.onMessage(message))
    child.on('error', () => {})
    child.once('disconnect', () => this.onKeeperGone(child))
    // Neither the keeper nor its channel holds the host open: a host with nothing else to do exits, its shells kept.
    child.unref()
    ;(child.channel as { unref?: () => void } | undefined)?.unref?.()
    this.child = child
    this.pid = child.pid
    return child
  }

  /** Ask the keeper to spawn one shell; rejects SPAWN_FAILED or LOG_UNAVAILABLE as a host spawn would. */
  /** `pieces`: the feed keeps where each stream's bytes lie. */
  spawn(request: Omit<SpawnRequest, 't'>, pieces = false): Promise<KeptHandle> {
    return new Promise<KeptHandle>((resolve, reject) => {
      const message: SpawnRequest = { t: 'spawn', ...request }
      const child = this.keeper()
      this.pending.set(request.id, { resolve, reject, request: message, pieces })
      // A spawn under way holds the host open (a script awaiting it must not end); nothing else on the channel does.
      this.holdChannel()
      try {
        child.send(message)
      } catch (error) {
        this.pending.delete(request.id)
        this.holdChannel()
        reject(this.spawnFailed(message, String(error)))
      }
    })
  }

  private spawnFailed(request: SpawnRequest, reason: string): HarnessError {
    return new HarnessError(
      `${request.files.toolName}: could not start ${request.shown} — check that it is installed and on PATH`, 'SPAWN_FAILED', { cause: new Error(reason) },
    )
  }

  private holdChannel(): void {
    const channel = this.child?.channel as { ref?: () => void, unref?: () => void } | undefined | null
    if (this.pending.size > 0) channel?.ref?.()
    else channel?.unref?.()
  }

  private onMessage(message: KeeperMessage): void {
    if (message.t === 'spawned' || message.t === 'failed') {
      const pending = this.pending.get(message.id)
      this.pending.delete(message.id)
      this.holdChannel()
      if (pending === undefined) return
      if (message.t === 'failed') {
        const { files } = pending.request
        pending.reject(message.code === 'LOG_UNAVAILABLE' ? noLog(files.toolName, files.log.slice(0, files.log.lastIndexOf('/')), message.reason) : this.spawnFailed(pending.request, message.reason))
        return
      }
      const said = { exit: false, drained: false }
      const feed = new KeptFeed(pending.request.files.log, pending.pieces)
      const handle = { leader: new KeptLeader(message.pid, message.start), feed, said }
      this.shells.set(message.id, handle)
      pending.resolve(handle)
      return
    }
    this.queue.push(message)
    this.flushing ??= setImmediate(() => this.flush())
  }

  private flush(): void {
    this.flushing = undefined
    const queue = this.queue
    this.queue = []
    for (const message of queue) {
      const shell = this.shells.get(message.id)
      if (shell === undefined) continue
      if (message.t === 'out') shell.feed.out(message.chunk, message.stream, message.at)
      else if (message.t === 'stopped') shell.feed.stopped(message.failure)
      else if (message.t === 'exit') {
        shell.said.exit = true
        shell.leader.exited(message.code, message.signal)
      } else if (message.t === 'drained') {
        shell.said.drained = true
        shell.feed.drain()
      }
      if (shell.said.exit && shell.said.drained) this.shells.delete(message.id)
    }
  }

  /**
   * The keeper died under a running host (killed by someone): nothing more will be said of its shells. Their output
   * is lost from here; each leader counts as exited once its pid is gone, and its processes are still watched.
   */
  private onKeeperGone(child: ChildProcess): void {
    if (this.child !== child) return
    this.child = undefined
    this.pid = undefined
    for (const pending of this.pending.values()) pending.reject(this.spawnFailed(pending.request, 'the keeper exited'))
    this.pending.clear()
    this.flush()
    for (const { leader, feed } of this.shells.values()) {
      feed.drain()
      const poll = setInterval(() => {
        if (this.startTime(leader.pid) === leader.start) return
        clearInterval(poll)
        leader.exited(null, null)
      }, 200)
      poll.unref()
    }
    this.shells.clear()
  }

  /**
   * The host leaves: the keeper is told so, the channel closes, and the keeper keeps what still runs for its TTL (or
   * exits at once with none). Told before the close, as the close alone may never reach it (keeper-protocol.ts,
   * HostLeaves): the keeper then closes its end, which lets this end go.
   */
  disconnect(): void {
    const child = this.child
    this.child = undefined
    // A spawn not yet answered never will be to this host (the channel's close no longer reaches onKeeperGone): it fails
    // now, and the keeper treats a shell it still starts as one whose host left (its TTL).
    for (const pending of this.pending.values()) pending.reject(this.spawnFailed(pending.request, 'the host left before the keeper answered'))
    this.pending.clear()
    if (child?.connected !== true) return
    const leave: HostMessage = { t: 'leave' }
    // With a callback, a send the keeper can no longer take fails here, not as an 'error' on the child.
    child.send(leave, undefined, {}, () => {})
    child.disconnect()
  }
}
