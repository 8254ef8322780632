// One shell as its keeper holds it: the keeper is its parent, drains both pipes into the capped log and the stream
// sidecar, watches its processes (group, cgroup, marks) until none is left, writes the exit file, and stops it when
// its TTL runs out with no host holding it.
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { shellCgroup } from './cgroup.ts'
import type { ExitRecord, KeeperMessage, SpawnRequest } from './keeper-protocol.ts'
import { Ledger, writeAtomic, type LedgerPatch } from './ledger.ts'
import { LogWriter } from './log-writer.ts'
import type { ProcessCensus } from './proc-census.ts'
import { ProcessGroup } from './process-group.ts'
import type { LocalSyscalls } from './syscalls.ts'

/** How long the pipes are drained once the shell is empty (a process that left it may hold them). */
const DRAIN_MS = 1000
/** How long this keeper's census of an ended shell waits while a host holds it (the host's kill needs the CPU then). */
const HOST_FIRST_MS = 50

/** Once every stream closed. */
function allClosed(streams: readonly Readable[]): Promise<void[]> {
  return Promise.all(streams.map((stream) => stream.closed ? Promise.resolve() : new Promise<void>((resolve) => stream.once('close', () => resolve()))))
}

/** True once every stream closed; false after `ms`. */
function closedWithin(streams: readonly Readable[], ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    void allClosed(streams).then(() => {
      clearTimeout(timer)
      resolve(true)
    })
  })
}

type Send = (message: KeeperMessage) => void

export class KeptShell {
  readonly ended: Promise<void>
  private ttl: NodeJS.Timeout | undefined
  private ttlKilled = false
  /** Connections that took the shell back: while one lives, no TTL runs. */
  readonly holders = new Set<object>()

  private constructor(
    private readonly request: SpawnRequest, private readonly writer: LogWriter, private readonly group: ProcessGroup,
    streams: readonly Readable[], private readonly send: Send, private readonly hostGone: () => boolean,
  ) {
    this.ended = this.watch(streams)
  }

  /** Spawn `request` (the keeper answers `spawned` or `failed` at once); undefined when nothing started. */
  static start(
    request: SpawnRequest, census: ProcessCensus, sys: LocalSyscalls, send: Send, hostGone: () => boolean,
  ): KeptShell | undefined {
    const { files, id } = request
    let writer: LogWriter
    try {
      writer = new LogWriter(files.log, files.maxLogBytes, files.toolName, files.streams)
    } catch (error) {
      send({ t: 'failed', id, code: 'LOG_UNAVAILABLE', reason: (error as NodeJS.ErrnoException).code ?? String(error) })
      return undefined
    }
    const [program, ...args] = request.argv
    const marks = Object.fromEntries(request.marks.map((mark) => [mark.slice(0, mark.indexOf('=')), mark.slice(mark.indexOf('=') + 1)]))
    let child: ChildProcessByStdio<null, Readable, Readable> | undefined
    let reason = 'no process started'
    try {
      child = spawn(program, args, { cwd: request.cwd, env: { ...request.env, ...marks }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    } catch (error) {
      // Arguments spawn cannot pass (a NUL byte) throw synchronously.
      reason = String(error)
    }
    if (child?.pid === undefined) {
      child?.once('error', () => {})
      // Nothing started: nothing of it is left when the host hears so.
      writer.close()
      rmSync(files.log, { force: true })
      rmSync(files.streams, { force: true })
      send({ t: 'failed', id, code: 'SPAWN_FAILED', reason })
      return undefined
    }
    const cgroup = request.cgroup === undefined ? undefined : shellCgroup(sys, request.cgroup.kind, request.cgroup.path)
    const group = new ProcessGroup(child, request.marks, census, request.stop, cgroup)
    send({ t: 'spawned', id, pid: child.pid, start: group.leaderStart })
    writer.watchers.add((chunk, stream) => send({ t: 'out', id, chunk, stream, at: writer.lastOutputAt ?? Date.now() }))
    writer.enders.add(() => send({ t: 'stopped', id, ...writer.failure === undefined ? {} : { failure: writer.failure } }))
    writer.attach(child.stdout, 'stdout')
    writer.attach(child.stderr, 'stderr')
    return new KeptShell(request, writer, group, [child.stdout, child.stderr], send, hostGone)
  }

  get id(): string {
    return this.request.id
  }

  get pid(): number {
    return this.group.pgid
  }

  get start(): number {
    return this.group.leaderStart
  }

  private async watch(streams: readonly Readable[]): Promise<void> {
    // The output is whole once both pipes closed (every piece was sent before): the host need not wait for the rest.
    let drained = false
    const tellDrained = () => {
      if (drained) return
      drained = true
      this.send({ t: 'drained', id: this.id })
    }
    const exit = await this.group.exited
    // A host connected now hears the end and records it itself (or, at its exit, has recorded why it stopped it).
    const heard = !this.hostGone()
    this.send({ t: 'exit', id: this.id, code: exit.code, signal: exit.signal, at: exit.at.getTime() })
    // Told after the exit: a host that read the exit from the leader's zombie has this word before its shell settles.
    void allClosed(streams).then(tellDrained)
    // The output's end first (it mostly comes with the shell's): this keeper's own census, a /proc scan, would hold up
    // the word a host's kill waits for. A process that left the shell holding the pipes only delays the census.
    await closedWithin(streams, DRAIN_MS)
    // A host holding the shell watches its end itself: the census waits a moment, not to take a core from that host.
    if (!this.hostGone()) await new Promise((resolve) => setTimeout(resolve, HOST_FIRST_MS))
    await this.group.whenEmpty(Number.POSITIVE_INFINITY)
    await closedWithin(streams, DRAIN_MS)
    tellDrained()
    for (const stream of streams) stream.destroy()
    this.writer.close()
    clearTimeout(this.ttl)
    const endedAt = Date.now()
    const record: ExitRecord = {
      v: 1, shellId: this.id, code: exit.code, signal: exit.signal, leaderExitedAt: exit.at.getTime(), endedAt,
      bytes: this.writer.bytes, capped: this.writer.capped,
      ...this.writer.failure === undefined ? {} : { failure: this.writer.failure },
      ...this.ttlKilled ? { ttlKilled: true as const } : {},
    }
    try {
      if (this.request.files.exitFile !== '') writeAtomic(this.request.files.exitFile, JSON.stringify(record), dirname(this.request.files.exitFile))
    } catch {}
    // A host that heard the end and still holds the shell records it itself. Otherwise the ledger learns it from here:
    // no host heard it, or the one that did has left since (an exit crossing the host's word that it lets its shells go
    // reached a host that no longer records their ends). Only a record still running changes: an end a host wrote (its
    // own, or stopped-at-exit before its exit's kill) stays.
    if ((!heard || this.hostGone()) && this.request.ledger !== undefined) {
      const patch: LedgerPatch = {
        state: this.ttlKilled || exit.signal !== null ? 'killed' : 'ended', endedAt, exitCode: exit.code, signal: exit.signal,
      }
      try {
        new Ledger(this.request.ledger.root).update(this.request.ledger.session, this.id, patch, (current) => current.state === 'running')
      } catch {}
    }
  }

  /** No host holds the shell: it lives at most its TTL from now. */
  armTtl(): void {
    if (this.holders.size > 0 || this.ttl !== undefined) return
    this.ttl = setTimeout(() => {
      this.ttlKilled = true
      void this.group.terminate({ signal: 'SIGTERM', force: true, timeoutMs: this.request.stop.graceMs }).catch(() => {})
    }, this.request.ttlMs)
  }

  disarmTtl(): void {
    clearTimeout(this.ttl)
    this.ttl = undefined
  }
}
