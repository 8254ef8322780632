/**
 * One background shell's processes and what we know about them: its process group, plus every
 * process outside it that carries the shell's environment marks (a `setsid` child, a
 * double-forked daemon). The leader is our own child, so its pid (the group id) cannot be
 * reused until Node reaps it; after that, the group is alive only while /proc shows a live
 * member that started no earlier than the leader. Once observed empty, the group is never
 * signalled again (pid reuse); marked processes are found afresh by each scan.
 */
import type { ChildProcess } from 'node:child_process'
import { groupExists, scanShells, signalPid, startTimeOf, type ScanResult, type ScanTarget } from './process-group.ts'

export interface LeaderExit {
  code: number | null
  signal: NodeJS.Signals | null
  at: Date
}

const NOTHING: ScanResult = { group: [], marked: [] }
/** While the leader lives after a signal, how soon the scan for marked processes outside the group runs. */
const DISCOVERY_MS = 20

export class ProcessGroup {
  readonly pgid: number
  readonly leaderStart: number
  /** Set once Node reaped the leader. */
  leaderExit: LeaderExit | undefined
  readonly exited: Promise<LeaderExit>
  /** Live processes at the last look (1 until the first scan: the leader). */
  live = 1
  private groupGone = false
  private gone = false
  /** The signal of the kill under way, owed to every marked process outside the group a scan finds. */
  private owed: { signal: NodeJS.Signals, sent: Set<number> } | undefined
  private discovery: NodeJS.Timeout | undefined
  /** Waits someone awaits (a kill): while one runs, the passive watch leaves the scanning to it. */
  private active = 0
  private readonly emptied: Promise<void>
  private markEmptied: () => void = () => {}

  /** `marks`: the `NAME=value` environment entries every process of the shell carries. */
  constructor(child: ChildProcess, readonly marks: readonly string[] = []) {
    if (child.pid === undefined) throw new Error('process group: the child has no pid (spawn failed)')
    this.pgid = child.pid
    // Read before the event loop can reap the leader: its /proc entry exists until then.
    this.leaderStart = startTimeOf(child.pid) ?? 0
    this.emptied = new Promise((resolve) => { this.markEmptied = resolve })
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.leaderExit = { code, signal, at: new Date() }
        resolve(this.leaderExit)
      })
    })
  }

  /** Whether the shell was observed with no live process (then it stays empty for us). */
  get empty(): boolean {
    return this.gone
  }

  /** What a scan looks for now; undefined when nothing is left to look for. */
  target(): ScanTarget | undefined {
    if (this.gone) return undefined
    // The leader was reaped and no process (a zombie included) is left in the group: no scan needed for it.
    if (this.leaderExit !== undefined && !this.groupGone && !groupExists(this.pgid)) this.groupGone = true
    if (this.groupGone && this.marks.length === 0) {
      this.gone = true
      this.live = 0
      this.markEmptied()
      return undefined
    }
    return { pgid: this.pgid, leaderStart: this.leaderStart, group: !this.groupGone, marks: this.marks }
  }

  /** Take in what a scan found for {@link target}. */
  observe(found: ScanResult): ScanResult {
    let result = found
    // A live process whose own pid is the group id leads a new group: the kernel hands a pid
    // out again only once nothing uses it as a group id, so ours emptied first (pid reuse).
    if (this.leaderExit !== undefined && !this.groupGone && (found.group.length === 0 || found.group.includes(this.pgid))) {
      this.groupGone = true
      result = { group: [], marked: found.marked }
    }
    this.live = result.group.length + result.marked.length
    const owed = this.owed
    if (owed !== undefined) {
      clearTimeout(this.discovery)
      for (const pid of result.marked) {
        if (!owed.sent.has(pid)) signalPid(pid, owed.signal)
        owed.sent.add(pid)
      }
    }
    if (this.leaderExit !== undefined && this.live === 0) {
      this.gone = true
      this.markEmptied()
    }
    return result
  }

  /** Live processes now, split into group members and marked ones outside the group. */
  scan(): ScanResult {
    const target = this.target()
    if (target === undefined) return NOTHING
    return this.observe(scanShells([target])[0] ?? NOTHING)
  }

  /** Live processes now (pids). Observing none after the leader exited marks the shell gone. */
  members(): number[] {
    const found = this.scan()
    return [...found.group, ...found.marked]
  }

  /**
   * A fresh look that trusts no cached liveness (a kill's wait and its survivors use it): the
   * group's live members, unless the group was seen empty or a newer process holds its id (pid
   * reuse), plus every marked process. Updates what is known, as a scan does.
   */
  census(): number[] {
    const [found] = scanShells([{ pgid: this.pgid, leaderStart: this.leaderStart, group: true, marks: this.marks }])
    if (found === undefined) return []
    const holder = startTimeOf(this.pgid)
    const reused = this.groupGone || (this.leaderExit !== undefined && holder !== undefined && holder !== this.leaderStart)
    const result = this.observe(reused ? { group: [], marked: found.marked } : found)
    return [...result.group, ...result.marked].sort((a, b) => a - b)
  }

  /**
   * Signal every process of the shell; false when there was none. While the leader is unreaped
   * its pid pins the group id, so the group is signalled at once and the marked processes
   * outside it by the next scan: the wait's, when the leader exits, or one `DISCOVERY_MS` later.
   * A cooperative shell is so stopped with one /proc pass.
   */
  signal(signal: NodeJS.Signals): boolean {
    if (this.gone) return false
    this.owed = { signal, sent: new Set() }
    if (this.leaderExit === undefined) {
      const sent = signalPid(-this.pgid, signal)
      if (this.marks.length > 0) {
        clearTimeout(this.discovery)
        this.discovery = setTimeout(() => this.scan(), DISCOVERY_MS)
        this.discovery.unref()
      }
      return sent
    }
    const found = this.scan()
    if (found.group.length > 0) signalPid(-this.pgid, signal)
    return found.group.length + found.marked.length > 0
  }

  /**
   * Resolve true as soon as the shell is empty, false after `timeoutMs`. The leader's exit wakes
   * it at once; then it polls /proc from 1 ms, doubling up to `maxIntervalMs`. Only a wait
   * someone awaits (`keepAlive`, a kill) holds the host open; watching a running shell never
   * does, and leaves the scanning to a kill's wait while one runs.
   */
  async waitEmpty(timeoutMs: number, maxIntervalMs: number, keepAlive: boolean): Promise<boolean> {
    if (keepAlive) this.active++
    try {
      const deadline = Date.now() + timeoutMs
      let interval = 1
      for (;;) {
        const leaderAlive = this.leaderExit === undefined
        const passive = !keepAlive && this.active > 0
        // A kill's wait takes a fresh census each time, so it never ends on stale knowledge.
        const empty = () => (keepAlive ? this.census() : this.members()).length === 0
        if (this.gone || (!leaderAlive && !passive && empty())) return true
        const left = deadline - Date.now()
        if (left <= 0) return false
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, leaderAlive ? left : Math.min(passive ? maxIntervalMs : interval, left))
          if (!keepAlive) timer.unref()
          const wake = () => { clearTimeout(timer); resolve() }
          if (leaderAlive) void this.exited.then(wake)
          void this.emptied.then(wake)
        })
        interval = leaderAlive ? 1 : Math.min(interval * 2, maxIntervalMs)
      }
    } finally {
      if (keepAlive) this.active--
    }
  }
}
