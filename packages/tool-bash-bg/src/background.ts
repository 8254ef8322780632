/** One background shell: a detached process group writing to a capped log, watched until all of it is gone; it settles once. */
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs'
import type { Socket } from 'node:net'
import type { Readable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { JobHooks, JobOutcome } from '@deepseek-ai/dsh-jobs'
import { ProcessGroup } from './group.ts'
import { SHELL_MARK } from './process-group.ts'
import { closed, spawnGroup, type Launch } from './launch.ts'
import { LogWriter } from './log-writer.ts'
import type { KillOutcome, KillRequest, ShellRecord } from './registry-types.ts'
import { SeamProcesses } from './seam-processes.ts'
import { spawnInWorld } from './seam-spawn.ts'

/** How long to keep draining the pipes once the group is empty (a process that left the group may hold them). */
const DRAIN_AFTER_EMPTY_MS = 1000

/** Per stream, what the provider holds in memory between two pumps of its collect readers. */
const SEAM_TAIL_BYTES = 1024 * 1024

const escalates = (kill: KillRequest) => kill.force || kill.signal === 'SIGKILL'

/** `defaultKill`: the current bare job_kill request; `hostMark`: `DSH_BG_HOST=…`. */
export interface ShellInit {
  id: string
  command: string
  owner: string
  launch: Launch
  outputFile: string
  maxLogBytes: number
  defaultKill: () => KillRequest
  hostMark: string
}

/** In the local world a detached group with our marks, piped and unref'd; in another, one ctx.subprocess spawn in collect mode. */
function spawnShell(init: ShellInit): { group: ProcessGroup | SeamProcesses, streams: Readable[] } {
  const [name, value] = init.hostMark.split('=') as [string, string]
  const marks = { [SHELL_MARK]: init.id, [name]: value }
  const { world } = init.launch
  if (world.kind === 'subprocess') {
    // The in-memory tail only has to outlast one pump; the spill keeps the whole stream in that world.
    const collect = { maxBytes: SEAM_TAIL_BYTES, spill: { maxBytes: init.maxLogBytes } }
    const handle = spawnInWorld(world.runtime, init.launch, { stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs: init.defaultKill().timeoutMs }, marks)
    const group = new SeamProcesses(handle, init.defaultKill().timeoutMs)
    return { group, streams: [group.stdout, group.stderr] }
  }
  const child = spawnGroup(init.launch, marks)
  const streams = [child.stdout, child.stderr]
  // A running shell must not keep the host alive: exit handlers kill it instead.
  for (const stream of streams as Socket[]) stream.unref()
  child.unref()
  return { group: new ProcessGroup(child, [`${SHELL_MARK}=${init.id}`, init.hostMark]), streams }
}

export class BackgroundShell {
  readonly record: { -readonly [K in keyof ShellRecord]: ShellRecord[K] }
  /** Our own process layer in the local world; the ctx.subprocess handle in another. */
  readonly group: ProcessGroup | SeamProcesses
  readonly settled: Promise<ShellRecord>
  private readonly writer: LogWriter
  private termination: { request: KillRequest, outcome: Promise<KillOutcome> } | undefined
  private killSignal: string | undefined
  private cursor = 0
  private readonly decoder = new StringDecoder('utf8')

  /** Spawns synchronously (a host job's `run` must return at once); throws when nothing started. */
  constructor(private readonly init: ShellInit) {
    this.writer = new LogWriter(init.outputFile, init.maxLogBytes)
    let spawned
    try {
      spawned = spawnShell(init)
    } catch (error) {
      this.writer.close()
      unlinkSync(init.outputFile)
      throw error
    }
    this.group = spawned.group
    const streams = spawned.streams
    for (const stream of streams) this.writer.attach(stream)
    this.record = {
      id: init.id, pid: this.group.pgid, command: init.command, cwd: init.launch.cwd, owner: init.owner,
      started_at: new Date().toISOString(), status: 'running', exit_code: null, signal: null, leader_exited_at: null, ended_at: null,
      output_file: init.outputFile, bytes: 0, capped: false, last_output_at: null, processes: 1,
      ...this.group instanceof SeamProcesses ? { world_limits: this.group.limits } : {},
    }
    this.settled = this.watch(streams)
  }

  private async watch(streams: readonly Readable[]): Promise<ShellRecord> {
    const exit = await this.group.exited
    this.record.exit_code = exit.code
    this.record.signal = exit.signal
    this.record.leader_exited_at = exit.at.toISOString()
    await this.group.waitEmpty(Number.POSITIVE_INFINITY, false)
    await closed(streams, DRAIN_AFTER_EMPTY_MS)
    for (const stream of streams) stream.destroy()
    this.writer.close()
    this.sync()
    // A shell whose log could not be written ended in error: its output is incomplete.
    this.record.status = this.killSignal !== undefined || exit.signal !== null ? 'killed' : this.writer.failure === undefined ? 'completed' : 'error'
    this.record.ended_at = new Date().toISOString()
    return this.record
  }

  sync(): ShellRecord {
    this.record.bytes = this.writer.bytes
    this.record.capped = this.writer.capped
    const last = this.writer.lastOutputAt
    this.record.last_output_at = last === undefined ? null : new Date(last).toISOString()
    this.record.processes = this.group.live
    return this.record
  }

  /**
   * A request made while a kill is under way shares it, unless it asks for more (force, SIGKILL): then it
   * runs anew after that one if anything survived, so dispose's SIGKILL is not lost behind a force:false kill.
   */
  terminate(request: KillRequest): Promise<KillOutcome> {
    const current = this.termination
    if (current !== undefined) {
      if (escalates(current.request) || !escalates(request)) return current.outcome
      return current.outcome.then((outcome) => outcome.survivors.length === 0 ? outcome : this.terminate(request))
    }
    const entry = {
      request,
      outcome: this.group.terminate(request, () => { this.killSignal ??= request.signal }).then(async (outcome) => {
        if (outcome.survivors.length === 0) await this.settled
        return outcome
      }).finally(() => { if (this.termination === entry) this.termination = undefined }),
    }
    this.termination = entry
    return entry.outcome
  }

  outcome(): JobOutcome {
    const record = this.record
    const cap = record.capped ? `; log capped at ${record.bytes} bytes` : ''
    if (record.status === 'killed') {
      return { status: 'killed', detail: `signal: ${record.signal ?? this.killSignal ?? 'SIGTERM'}${cap}` }
    }
    if (record.status === 'error') {
      return { status: 'failed', detail: `exit code: ${record.exit_code ?? 0}; log write failed (${this.writer.failure}) at ${record.bytes} bytes` }
    }
    return { status: 'completed', detail: `exit code: ${record.exit_code ?? 0}${cap}` }
  }

  /** Every piece of the log as it is written (wait_for attaches in the spawning tick, so it sees all). */
  watchOutput(watcher: (written: Buffer) => void): () => void {
    this.writer.watchers.add(watcher)
    return () => { this.writer.watchers.delete(watcher) }
  }

  /** New log output since the last read, at most the newest `limit` bytes. */
  readOutput(limit: number): string {
    const end = this.writer.bytes
    if (end <= this.cursor) return ''
    const skipped = Math.max(0, end - this.cursor - limit)
    if (skipped > 0) this.decoder.end()
    const buffer = Buffer.alloc(end - this.cursor - skipped)
    try {
      const fd = openSync(this.record.output_file, 'r')
      try {
        readSync(fd, buffer, 0, buffer.length, this.cursor + skipped)
      } finally {
        closeSync(fd)
      }
    } catch {
      // The log is gone (the shell was removed).
      return ''
    }
    this.cursor = end
    if (skipped === 0) return this.decoder.write(buffer)
    // A skip can land inside a UTF-8 sequence: drop its continuation bytes rather than decode them as U+FFFD.
    let start = 0
    while (start < 3 && start < buffer.length && ((buffer[start] ?? 0) & 0xC0) === 0x80) start++
    return `[${skipped + start} earlier bytes skipped; the whole log is ${this.record.output_file}]\n${this.decoder.write(buffer.subarray(start))}`
  }

  /** Host job hooks. The cancel carries out a stored kill_shell request once; a later cancel is a bare job_kill. */
  hooks(readLimit: number): JobHooks {
    return {
      cancel: () => {
        // cancel must never throw; the group stays reachable through dispose and exit handlers.
        try {
          const request = this.record.kill_request ?? this.init.defaultKill()
          delete this.record.kill_request
          this.terminate(request).catch(() => {})
        } catch {}
      },
      done: this.settled.then(() => this.outcome()),
      readOutput: () => this.readOutput(readLimit),
    }
  }
}
