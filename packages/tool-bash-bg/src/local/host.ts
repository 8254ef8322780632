// The local world as one object: this host's syscalls, /proc census, cgroup host, host directory, the SIGKILLs owed
// to a dead host's leftovers and the exit hook. The plugin's lifecycle makes one and disposes it; a reload leaves
// nothing of the old one behind. Each command's leader is spawned in a new process group with piped output.
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import type { Socket } from 'node:net'
import { delimiter, join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { Launch } from '../contract.ts'
import { openCgroupHost, type CgroupHost } from './cgroup.ts'
import { HostDir, type KeeperIdentity } from './host-dir.ts'
import { KeeperClient, type KeptFeed } from './keeper-client.ts'
import type { KeptFiles } from './keeper-protocol.ts'
import { reapBySocket, reapLeftovers } from './leftovers.ts'
import { HOST_MARK, ProcessCensus, SHELL_MARK } from './proc-census.ts'
import { ProcessGroup, type GroupStop } from './process-group.ts'
import { localSyscalls, type LocalSyscalls } from './syscalls.ts'

/** The waits of a local stop (the kill policy's, where each is said). */
type LocalPolicy = GroupStop & { leftoverGraceMs: number, exitGraceMs: number }

/** What host exit stops: one running shell's processes. */
export interface ExitTarget {
  signalNow(signal: 'SIGTERM' | 'SIGKILL'): boolean
  aliveNow(): boolean
}

/** At host exit: what to stop now, and the file names (in the host directory) of shells kept running past it. */
export interface AtExit {
  targets: ExitTarget[]
  keep: ReadonlySet<string>
}

/** One background shell's plan beyond its launch: its files, and its TTL and ledger record once no host holds it. */
export interface KeptPlan {
  files: KeptFiles
  ttlMs: number
  ledger?: { root: string, session: string }
  /** The feed keeps where each stream's bytes lie (host 0.1.7's per-stream sources). */
  pieces?: boolean
}

/** A kept shell as started: its processes, its log as the keeper reports it, and what the ledger records. */
export type KeptStart = { processes: ProcessGroup, log: KeptFeed, release(): void, facts: KeptFacts }

/** What the ledger records of a kept shell's processes. */
interface KeptFacts {
  pidStart: number
  pidns: string
  cgroup?: string
  keeper?: KeeperIdentity
}

type Piped = ChildProcessByStdio<null, Readable, Readable>

/** Whether spawn would find the program: behind the cgroup join a missing one would only exit 127, not fail the spawn. */
function found(launch: Launch): boolean {
  const [program] = launch.argv
  const dirs = program.includes('/') ? [''] : (launch.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '')
  return dirs.some((dir) => {
    try {
      accessSync(dir === '' ? resolve(launch.cwd, program) : join(dir, program), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** Spawn the leader of a new process group; throws SPAWN_FAILED naming `shown` (the program the call asked for) when nothing started. */
function spawnGroup(toolName: string, launch: Launch, marks: Readonly<Record<string, string>>, shown: string): Piped {
  const [program, ...args] = launch.argv
  const failed = (cause?: unknown) => new HarnessError(
    `${toolName}: could not start ${shown} — check that it is installed and on PATH`, 'SPAWN_FAILED', cause === undefined ? undefined : { cause },
  )
  let child: Piped
  try {
    child = spawn(program, args, { cwd: launch.cwd, env: { ...launch.env, ...marks }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    // Arguments spawn cannot pass (a NUL byte) throw synchronously.
    throw failed(error)
  }
  if (child.pid === undefined) {
    child.once('error', () => {})
    throw failed()
  }
  return child
}

/** Termination, interrupt, and hangup (the terminal closed, the SSH session dropped): each ends the host, so each stops its shells. */
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const
/** Tags our listeners across module copies (HMR loads a fresh copy of this file). */
const OURS = Symbol.for('@gencode-ai/dsh-tool-bash-bg/exit-guard')

type Tagged = ((signal: NodeJS.Signals) => void) & { [OURS]?: true }

export class LocalHost {
  readonly census: ProcessCensus
  readonly dir: HostDir
  /** Opened at the first command; `host` undefined where this host may not make cgroups. */
  private cgroups: { host: CgroupHost | undefined } | undefined
  private readonly owed = new Set<() => void>()
  private unguard: (() => void) | undefined
  /** The keeper of this host's background shells: started at the first one. */
  readonly keeper: KeeperClient

  constructor(private readonly toolName: string, private readonly policy: LocalPolicy, readonly sys: LocalSyscalls = localSyscalls()) {
    this.census = new ProcessCensus(sys)
    this.dir = new HostDir(toolName, this.census.startTime(process.pid) ?? 0)
    this.keeper = new KeeperClient(this.dir.keeperSocket() ?? '', (pid) => this.census.startTime(pid))
  }

  /** The environment marks of one command: its shell id and this host. */
  marks(shellId: string): Record<string, string> {
    return { [SHELL_MARK]: shellId, [HOST_MARK]: this.dir.name }
  }

  /** A SIGKILL owed after the leftover grace, paid at this host's exit if that comes first. */
  killLater(kill: () => void): void {
    this.owed.add(kill)
    setTimeout(() => {
      if (this.owed.delete(kill)) kill()
    }, this.policy.leftoverGraceMs).unref()
  }

  /** Stop what hosts proven dead left: those judged by pid and start now, the rest by their socket later. */
  reap(): { now: number, later: Promise<number> } {
    return { now: reapLeftovers(this), later: reapBySocket(this) }
  }

  /** Start `launch` in its own process group, marked, in a cgroup it joins before it execs where one can be had; throws SPAWN_FAILED. */
  start(launch: Launch, shellId: string) {
    const cgroup = this.cgroupFor(launch)
    const marks = this.marks(shellId)
    const spawned = cgroup === undefined ? launch : { ...launch, argv: cgroup.wrap(launch.argv) }
    let child
    try {
      child = spawnGroup(this.toolName, spawned, marks, launch.argv[0])
    } catch (error) {
      cgroup?.remove()
      throw error
    }
    const names = Object.entries(marks).map(([name, value]) => `${name}=${value}`)
    const processes = new ProcessGroup(child, names, this.census, this.policy, cgroup)
    const release = () => {
      for (const stream of [child.stdout, child.stderr] as Socket[]) stream.unref()
      child.unref()
    }
    return { processes, stdout: child.stdout, stderr: child.stderr, release }
  }

  /**
   * A background shell, spawned by the keeper (its parent: the output goes to the log without this process in the
   * path), in its own process group, marked, in a cgroup it joins first where one can be had; rejects SPAWN_FAILED.
   */
  async startKept(launch: Launch, shellId: string, plan: KeptPlan): Promise<KeptStart> {
    const cgroup = this.cgroupFor(launch)
    const marks = Object.entries(this.marks(shellId)).map(([name, value]) => `${name}=${value}`)
    // A TTL's stop is a leftover's: SIGTERM, the leftover grace, SIGKILL.
    const stop = { graceMs: this.policy.leftoverGraceMs, afterKillMs: this.policy.afterKillMs, reapMs: this.policy.reapMs }
    let handle
    try {
      handle = await this.keeper.spawn({
        id: shellId, argv: cgroup === undefined ? launch.argv : cgroup.wrap(launch.argv), cwd: launch.cwd, env: launch.env, marks,
        ...cgroup === undefined ? {} : { cgroup: { kind: cgroup.kind, path: cgroup.path } },
        files: plan.files, ttlMs: plan.ttlMs, ...plan.ledger === undefined ? {} : { ledger: plan.ledger },
        stop, shown: launch.argv[0],
      }, plan.pieces === true)
    } catch (error) {
      cgroup?.remove()
      throw error
    }
    const keeper = this.keeper.identity()
    this.dir.keeperIs(keeper)
    const processes = new ProcessGroup(handle.leader, marks, this.census, this.policy, cgroup)
    const kept: KeptFacts = {
      pidStart: handle.leader.start, pidns: this.dir.pidns,
      ...cgroup === undefined ? {} : { cgroup: cgroup.path }, ...keeper === undefined ? {} : { keeper },
    }
    return { processes, log: handle.feed, release: () => {}, facts: kept }
  }

  /** Behind the join a missing program would only exit 127, so none then; `DSH_BG_TRACKING=marks` withholds it (tests). */
  private cgroupFor(launch: Launch) {
    return found(launch) && process.env.DSH_BG_TRACKING !== 'marks' ? this.newCgroup() : undefined
  }

  private newCgroup() {
    this.cgroups ??= { host: openCgroupHost(this.sys) }
    return this.cgroups.host?.create()
  }

  /**
   * On exit, SIGTERM, SIGINT and SIGHUP: every running shell and foreground run `atExit` names killed synchronously,
   * then what a cgroup still holds (unless shells are kept: their keeper guards them), the host directory removed but
   * for the kept shells' files; a signal re-raised only when no other listener handles it.
   */
  guardExit(atExit: () => AtExit): void {
    let done = false
    const onExit: Tagged = () => {
      if (done) return
      done = true
      const { targets, keep } = atExit()
      this.killSync(targets)
      for (const kill of this.owed) kill()
      this.owed.clear()
      if (keep.size === 0) this.cgroups?.host?.close(this.policy.exitGraceMs)
      else this.cgroups?.host?.remove()
      this.dir.remove(keep)
    }
    const onSignal: Tagged = (signal: NodeJS.Signals) => {
      if (process.listeners(signal).some((listener) => (listener as Tagged)[OURS] !== true)) return
      onExit(signal)
      this.unguard?.()
      // The last of our guards restores the default action: the process ends by this signal.
      if (process.listenerCount(signal) === 0) this.sys.signal(process.pid, signal)
    }
    onExit[OURS] = true
    onSignal[OURS] = true
    process.on('exit', onExit)
    for (const signal of SIGNALS) process.on(signal, onSignal)
    this.unguard = () => {
      process.off('exit', onExit)
      for (const signal of SIGNALS) process.off(signal, onSignal)
      this.unguard = undefined
    }
  }

  /** Without yielding to the event loop: SIGTERM, up to the exit grace, SIGKILL. */
  private killSync(targets: readonly ExitTarget[]): void {
    let alive = targets.filter((processes) => processes.signalNow('SIGTERM'))
    const deadline = Date.now() + this.policy.exitGraceMs
    while (alive.length > 0 && Date.now() < deadline) {
      this.sys.sleep(5)
      alive = alive.filter((processes) => processes.aliveNow())
    }
    for (const processes of alive) processes.signalNow('SIGKILL')
    // No timer runs before the process ends: deliver the SIGKILL owed to marked processes now.
    for (const processes of alive) processes.aliveNow()
  }

  /**
   * Plugin dispose, once its shells are stopped or kept: the exit hook goes, the empty cgroups and the host directory
   * too (but for `keep`, the kept shells' files); the keeper's channel closes, so it keeps what runs for its TTL.
   */
  dispose(keep: ReadonlySet<string> = new Set()): void {
    this.unguard?.()
    this.cgroups?.host?.remove()
    this.cgroups = undefined
    this.keeper.disconnect()
    this.dir.remove(keep)
  }
}
