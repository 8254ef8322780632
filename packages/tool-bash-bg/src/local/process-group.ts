// The local world's ShellProcesses: one shell's processes (its cgroup where it has one, its group, processes
// carrying its marks, and marked processes seen before whose marks vanished) and the one place they are killed.
// The leader's pid is not reused until Node reaps it; after that, an empty group is never signalled again.
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { KillOutcome, KillRequest, LeaderExit, Tracking } from '../contract.ts'
import type { ShellCgroup } from './cgroup.ts'
import type { ProcessCensus, ScanResult, ScanTarget } from './proc-census.ts'

/** What the group needs of its leader: Node's ChildProcess, or a scripted stand-in. */
export interface Leader {
  readonly pid?: number | undefined
  /** Its /proc start time when another process (the keeper) spawned it and told us. */
  readonly start?: number
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
}

/**
 * leader-alive: the leader pins the group id; leader-exited: reaped, the group may hold processes (a server started
 * with `&`); group-gone: seen empty (its id may be another's now), only marked processes count; empty: for good.
 */
export type GroupPhase =
  | { readonly name: 'leader-alive' }
  | { readonly name: 'leader-exited' | 'group-gone' | 'empty', readonly exit: LeaderExit }

/** The waits of a stop this group takes from the kill policy (where each is said). */
export type GroupStop = { afterKillMs: number, reapMs: number }

const nothing = (): ScanResult => ({ group: [], marked: [] })
/** While the leader lives after a signal, how soon the scan for marked processes outside the group runs. */
const DISCOVERY_MS = 20
/** How soon after the start the cgroup's join is looked at, so a kill knows the tracking in force without a read first. */
const JOIN_LOOK_MS = 10
/** Poll ceilings once the leader exited: a kill's wait, and the watch of a group outliving its leader. */
const KILL_POLL_MS = 50
const WATCH_POLL_MS = 1000

export class ProcessGroup {
  readonly pgid: number
  readonly leaderStart: number
  /** The leader is another process's child (the keeper's): it is reaped there, unseen. */
  private readonly remote: boolean
  readonly exited: Promise<LeaderExit>
  private settleExit: (exit: LeaderExit) => void = () => {}
  /** The leader's end was read from its zombie here, before its parent's word came. */
  private exitSeenHere = false
  phase: GroupPhase = { name: 'leader-alive' }
  live = 1
  /** The signal of the kill under way, owed to every marked process a scan finds. */
  private owed: { signal: NodeJS.Signals, sent: Set<number> } | undefined
  private discovery: NodeJS.Timeout | undefined
  /** Kill waits under way: meanwhile the passive watch leaves the scanning to them. */
  private active = 0
  private markEmptied: () => void = () => {}
  private readonly emptied = new Promise<void>((resolve) => { this.markEmptied = resolve })
  /** Every marked pid a scan found, with its start time: still ours after a new title overwrites its environment. */
  private readonly seen = new Map<number, number>()
  /** Set once the leader was seen in its cgroup: from then on the cgroup alone answers who is a member. */
  private joined = false
  /** The pauses under way, woken early when the watched cgroup's `populated` flips. */
  private readonly wakers = new Set<() => void>()
  /** The watch on the joined cgroup's `populated` flip, from the join until the shell is empty. */
  private unwatch: (() => void) | undefined

  constructor(
    leader: Leader, readonly marks: readonly string[], private readonly proc: ProcessCensus, private readonly stop: GroupStop,
    private readonly cgroup?: ShellCgroup,
  ) {
    if (leader.pid === undefined) throw new Error('process group: the child has no pid (spawn failed)')
    this.pgid = leader.pid
    this.leaderStart = leader.start ?? proc.startTime(leader.pid) ?? 0
    this.remote = leader.start !== undefined
    this.exited = new Promise((resolve) => { this.settleExit = resolve })
    leader.once('exit', (code, signal) => this.leaderExited(code, signal, false))
    if (cgroup !== undefined) setTimeout(() => { if (this.phase.name === 'leader-alive') this.join() }, JOIN_LOOK_MS).unref()
  }

  get pid(): number {
    return this.pgid
  }

  /**
   * The leader's end: its parent's word (Node's 'exit', or the keeper's), or `seenHere`, read from its zombie. The
   * parent's word after a zombie's is the truth and corrects the exit already given (they differ only for a leader
   * thread that ended before its process); a word with neither code nor signal (its parent vanished) corrects nothing.
   */
  private leaderExited(code: number | null, signal: NodeJS.Signals | null, seenHere: boolean): void {
    if (this.phase.name !== 'leader-alive') {
      if (this.exitSeenHere && !seenHere && (code !== null || signal !== null)) Object.assign(this.phase.exit, { code, signal })
      this.exitSeenHere = false
      return
    }
    const exit = { code, signal, at: new Date() }
    this.phase = { name: 'leader-exited', exit }
    this.exitSeenHere = seenHere
    // A kill's wait takes its census now, which delivers what marked processes are owed.
    clearTimeout(this.discovery)
    this.settleExit(exit)
  }

  /** A remote leader that died while its parent (the keeper) has not reaped it yet: its zombie says how, now. */
  private lookAtLeader(): void {
    if (!this.remote || this.phase.name !== 'leader-alive') return
    const exit = this.proc.zombieExit(this.pgid, this.leaderStart)
    if (exit !== undefined) this.leaderExited(exit.code, exit.signal, true)
  }

  get tracking(): Tracking {
    return this.joined ? 'cgroup' : 'marks'
  }

  /** Whether the cgroup holds the shell (joined, or ran there), else moved in now while childless; if not, marks serve. */
  private join(): boolean {
    if (this.joined || this.cgroup === undefined) return this.joined
    const populated = this.cgroup.populated?.() ?? this.cgroup.pids().length > 0
    this.joined = populated || this.cgroup.ran?.() === true
      || (this.phase.name === 'leader-alive' && this.cgroup.adopt(this.pgid) && this.cgroup.pids().includes(this.pgid))
    // Set up here, off a kill's path (the join is looked at soon after the start): a kill's wait wakes on the flip.
    if (this.joined && this.cgroup.populated !== undefined) {
      this.unwatch = this.cgroup.watch?.(() => { for (const wake of this.wakers) wake() })
    }
    return this.joined
  }

  /** The cgroup's members split as a scan splits them (a superset of the marks'); undefined until the leader joined. */
  private cgroupLook(): ScanResult | undefined {
    if (!this.join() || this.cgroup === undefined) return undefined
    // One small file says whether anything is left, nested cgroups included: no member list, no stat.
    if (this.cgroup.populated?.() === false) return this.escaped() ?? nothing()
    const pids = this.cgroup.pids()
    if (pids.length === 0) return this.escaped() ?? nothing()
    const found: ScanResult = { group: [], marked: [] }
    const guarded = this.proc.protectedPids()
    const groupKnown = this.phase.name !== 'group-gone'
    for (const pid of pids) {
      const stat = guarded.has(pid) ? undefined : this.proc.liveStat(pid)
      if (stat === undefined) continue
      if (groupKnown && stat.pgrp === this.pgid) found.group.push(pid)
      else found.marked.push(pid)
    }
    return found
  }

  /**
   * An empty cgroup while the group still has members: they left the cgroup (root can move a process, as systemd-run
   * does), so the group's members by a /proc scan are the shell's. Undefined when the group is gone too (one syscall).
   */
  private escaped(): ScanResult | undefined {
    if (this.phase.name === 'group-gone' || !this.proc.sys.groupExists(this.pgid)) return undefined
    // Once the leader exited, a group id whose pid another process holds is that process's group (the kernel reuses a
    // pid only once nothing uses it as a group id): never ours to count or signal.
    const leaderGone = this.phase.name !== 'leader-alive'
    const holder = leaderGone ? this.proc.startTime(this.pgid) : undefined
    if (holder !== undefined && holder !== this.leaderStart) return undefined
    const [found] = this.proc.scan([{ pgid: this.pgid, leaderStart: this.leaderStart, group: true, marks: [] }])
    if (found === undefined || found.group.length === 0 || (leaderGone && found.group.includes(this.pgid))) return undefined
    return { group: found.group, marked: [] }
  }

  get leaderExit(): LeaderExit | undefined {
    return this.phase.name === 'leader-alive' ? undefined : this.phase.exit
  }

  private moveTo(name: 'group-gone' | 'empty'): void {
    if (this.phase.name === 'leader-alive' || this.phase.name === 'empty') return
    this.phase = { name, exit: this.phase.exit }
    if (name === 'empty') {
      this.live = 0
      this.unwatch?.()
      this.unwatch = undefined
      this.cgroup?.remove()
      this.markEmptied()
    }
  }

  target(): ScanTarget | undefined {
    // The leader was reaped and nothing (a zombie included) is left in the group.
    if (this.phase.name === 'leader-exited' && !this.proc.sys.groupExists(this.pgid)) this.moveTo('group-gone')
    if (this.phase.name === 'group-gone' && this.marks.length === 0 && this.cgroup === undefined && this.seen.size === 0) this.moveTo('empty')
    if (this.phase.name === 'empty') return undefined
    return { pgid: this.pgid, leaderStart: this.leaderStart, group: this.phase.name !== 'group-gone', marks: this.marks }
  }

  /** Add to a scan's marked pids those seen marked before that still live as the same process (a new title wiped the mark). */
  private remember(found: ScanResult): ScanResult {
    if (this.joined) return found
    const group = new Set(found.group)
    const marked = new Set(found.marked)
    for (const pid of found.marked) if (!this.seen.has(pid)) this.seen.set(pid, this.proc.startTime(pid) ?? -1)
    for (const [pid, start] of this.seen) {
      if (group.has(pid) || marked.has(pid)) continue
      if (this.proc.liveStat(pid)?.starttime === start) marked.add(pid)
      else this.seen.delete(pid)
    }
    return marked.size === found.marked.length ? found : { group: found.group, marked: [...marked] }
  }

  observe(scanned: ScanResult): ScanResult {
    const found = this.remember(scanned)
    let result = found
    // A live process whose own pid is the group id leads a new group: the kernel reuses a pid
    // only once nothing uses it as a group id, so ours emptied first.
    if (this.phase.name === 'leader-exited' && (found.group.length === 0 || found.group.includes(this.pgid))) {
      this.moveTo('group-gone')
      result = { group: [], marked: found.marked }
    }
    this.live = result.group.length + result.marked.length
    if (this.owed !== undefined) {
      clearTimeout(this.discovery)
      for (const pid of result.marked) {
        if (!this.owed.sent.has(pid)) this.proc.sys.signal(pid, this.owed.signal)
        this.owed.sent.add(pid)
      }
    }
    if (this.phase.name !== 'leader-alive' && this.live === 0) this.moveTo('empty')
    return result
  }

  private scan(): ScanResult {
    const target = this.target()
    if (target === undefined) return nothing()
    return this.observe(this.cgroupLook() ?? this.proc.scan([target])[0] ?? nothing())
  }

  members(): number[] {
    const found = this.scan()
    return [...found.group, ...found.marked]
  }

  /** Live pids by a fresh look that trusts no cached liveness (a kill's wait and survivors), sorted. */
  census(): number[] {
    if (this.phase.name === 'empty') return []
    const look = this.cgroupLook()
    if (look !== undefined) {
      const result = this.observe(look)
      return [...result.group, ...result.marked].sort((a, b) => a - b)
    }
    const [found] = this.proc.scan([{ pgid: this.pgid, leaderStart: this.leaderStart, group: true, marks: this.marks }])
    if (found === undefined) return []
    const holder = this.proc.startTime(this.pgid)
    const reused = this.phase.name === 'group-gone' || (this.phase.name === 'leader-exited' && holder !== undefined && holder !== this.leaderStart)
    const result = this.observe(reused ? { group: [], marked: found.marked } : found)
    return [...result.group, ...result.marked].sort((a, b) => a - b)
  }

  /** A forged or corrupt pid must never aim a signal at the host or its ancestors. */
  private guard(): void {
    if (!Number.isSafeInteger(this.pgid) || this.pgid <= 1 || this.proc.protectedPids().has(this.pgid)) {
      throw new HarnessError(
        `refusing to signal pid ${this.pgid}: it is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`,
        'SHELL_PROTECTED_PID',
      )
    }
  }

  /** False when no process was left. An unreaped leader pins the group id: signal it now, marked processes at the next scan. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.phase.name === 'empty') return false
    this.guard()
    this.owed = { signal, sent: new Set() }
    // SIGKILL reaches every member at once (cgroup.kill): a forking process cannot outrun it. The join was looked
    // at soon after the start (JOIN_LOOK_MS), so a kill seldom reads anything before its signal.
    const all = this.join() && signal === 'SIGKILL' && this.cgroup !== undefined && this.cgroup.signal('SIGKILL') > 0
    // A leader another process reaps (the keeper) may be gone before its exit reaches us: its pid is then no proof
    // of the group, which is signalled as after the leader's exit, once a scan found members in it.
    if (this.phase.name === 'leader-alive' && (!this.remote || this.proc.stat(this.pgid)?.starttime === this.leaderStart)) {
      const sent = this.proc.sys.signal(-this.pgid, signal) || all
      if (this.marks.length > 0 || this.cgroup !== undefined) {
        clearTimeout(this.discovery)
        this.discovery = setTimeout(() => this.scan(), DISCOVERY_MS).unref()
      }
      return sent
    }
    const found = this.scan()
    if (found.group.length > 0) this.proc.sys.signal(-this.pgid, signal)
    return all || found.group.length + found.marked.length > 0
  }

  signalNow(signal: 'SIGTERM' | 'SIGKILL'): boolean {
    try {
      return this.signal(signal)
    } catch {
      return false
    }
  }

  aliveNow(): boolean {
    return this.members().length > 0
  }

  /** Signal, wait, escalate (kill_shell, job_kill, a foreground timeout, dispose); `onSignalled` once a signal landed. */
  async terminate(request: KillRequest, onSignalled?: () => void): Promise<KillOutcome> {
    // A leader that exited but that Node has not reaped yet is a zombie still pinning the group: a signal "lands" on
    // it, and a quick command's own exit would read as a kill. Its reap is due: wait for it first (a remote leader's
    // zombie says how it ended at once).
    if (this.phase.name === 'leader-alive' && this.proc.stat(this.pgid)?.zombie === true) {
      this.lookAtLeader()
      if (this.phase.name === 'leader-alive') await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, this.stop.reapMs))])
    }
    const started = Date.now()
    const outcome = (signal_sent: KillOutcome['signal_sent'], force_killed: boolean, survivors: number[]): KillOutcome => ({
      signal_sent, force_killed, exit_code: this.leaderExit?.code ?? null,
      elapsed_ms: Date.now() - started, timeout_ms: request.timeoutMs, survivors, tracking: this.tracking,
    })
    if (!this.signal(request.signal)) return outcome('none', false, [])
    onSignalled?.()
    if (await this.waitEmpty(request.timeoutMs, true)) return outcome(request.signal, false, [])
    if (!request.force) return outcome(request.signal, false, this.census())
    this.signal('SIGKILL')
    const empty = await this.waitEmpty(this.stop.afterKillMs, true)
    return outcome(request.signal, true, empty ? [] : this.census())
  }

  async whenGroupEmpty(): Promise<void> {
    await this.exited
    for (let interval = 1; this.phase.name === 'leader-exited'; interval = Math.min(interval * 2, WATCH_POLL_MS)) {
      if (this.scan().group.length === 0) return
      await this.pause(interval, false, false)
    }
  }

  whenEmpty(timeoutMs: number): Promise<boolean> {
    return this.waitEmpty(timeoutMs, false)
  }

  /** Read afresh: another wait may have emptied the shell during an await. */
  private isEmpty(): boolean {
    return this.phase.name === 'empty'
  }

  /** A pid a census found is still one of ours and alive: one stat, no scan. */
  private stillAlive(pid: number): boolean {
    return (this.proc.liveStat(pid)?.starttime ?? -1) >= this.leaderStart
  }

  /** Sleep up to `ms`, waking early when the leader exits (while it lives), the watched cgroup flips, or the shell empties. */
  private pause(ms: number, keepAlive: boolean, leaderAlive: boolean): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      if (!keepAlive) timer.unref()
      this.wakers.add(wake)
      if (leaderAlive) void this.exited.then(wake)
      void this.emptied.then(wake)
    })
  }

  /** A joined cgroup with nothing left in it (one file read): the shell is empty, recorded as a census records it. */
  private cgroupEmptied(): boolean {
    if (!this.joined || this.cgroup?.populated?.() !== false) return false
    const escaped = this.escaped()
    this.observe(escaped ?? nothing())
    return escaped === undefined
  }

  /** A kill's wait in a watched cgroup: woken by the flip to empty; a doubling timer's census delivers what is owed. */
  private async waitCgroupEmptied(deadline: number): Promise<boolean> {
    for (let interval = 1; ; interval = Math.min(interval * 2, KILL_POLL_MS)) {
      if (this.cgroupEmptied()) return true
      const left = deadline - Date.now()
      if (left <= 0) return false
      await this.pause(Math.min(interval, left), true, false)
      if (this.cgroupEmptied() || this.census().length === 0) return true
    }
  }

  /**
   * True once the shell is empty, false after `timeoutMs`. A kill's wait (`keepAlive`, holding the host open) takes a
   * fresh census, watches its pids with one stat each until gone, then takes the next (which finds a fork meanwhile).
   */
  async waitEmpty(timeoutMs: number, keepAlive: boolean): Promise<boolean> {
    const maxIntervalMs = keepAlive ? KILL_POLL_MS : WATCH_POLL_MS
    if (keepAlive) this.active++
    try {
      const deadline = Date.now() + timeoutMs
      let interval = 1
      // A kill's wait looks for a remote leader's zombie at doubling intervals (and at each wake): the keeper's word
      // of its exit takes a trip through another process's event loop.
      let look = 1
      for (;;) {
        const leaderAlive = this.phase.name === 'leader-alive'
        const passive = !keepAlive && this.active > 0
        if (this.phase.name === 'empty') return true
        if (keepAlive && !leaderAlive && this.unwatch !== undefined) return await this.waitCgroupEmptied(deadline)
        let watched: number[] = []
        if (!leaderAlive && !passive) {
          watched = keepAlive ? this.census() : this.members()
          if (watched.length === 0) return true
        }
        const looking = leaderAlive && keepAlive && this.remote
        for (;;) {
          const left = deadline - Date.now()
          if (left <= 0) return false
          const ms = leaderAlive ? (looking ? look : left) : passive ? maxIntervalMs : interval
          await this.pause(Math.min(ms, left), keepAlive, leaderAlive)
          if (looking) {
            look = Math.min(look * 2, KILL_POLL_MS)
            this.lookAtLeader()
          }
          interval = leaderAlive ? 1 : Math.min(interval * 2, maxIntervalMs)
          if (!keepAlive || leaderAlive || this.isEmpty() || !watched.some((pid) => this.stillAlive(pid))) break
        }
      }
    } finally {
      if (keepAlive) this.active--
    }
  }
}
