// One shell's processes (its group, plus processes carrying its marks) and the one place they are killed.
// The leader's pid is not reused until Node reaps it; after that, an empty group is never signalled again.
import type { ChildProcess } from 'node:child_process'
import { groupExists, scanShells, signalPid, startTimeOf, type ScanResult, type ScanTarget } from './process-group.ts'
import type { KillOutcome, KillRequest } from './registry-types.ts'

export type LeaderExit = { code: number | null, signal: NodeJS.Signals | null, at: Date }

const NOTHING: ScanResult = { group: [], marked: [] }
/** While the leader lives after a signal, how soon the scan for marked processes outside the group runs. */
const DISCOVERY_MS = 20
/** After SIGKILL, how long to wait for the kernel to finish the group before reporting survivors. */
const AFTER_SIGKILL_MS = 1000
/** Poll ceilings once the leader exited: a kill's wait, and the watch of a group outliving its leader (a server started with `&`). */
const KILL_POLL_MS = 50
const WATCH_POLL_MS = 1000

export class ProcessGroup {
  readonly pgid: number
  readonly leaderStart: number
  leaderExit: LeaderExit | undefined
  readonly exited: Promise<LeaderExit>
  live = 1
  /** Observed with no live process: it stays empty for us. */
  empty = false
  private groupGone = false
  /** The signal of the kill under way, owed to every marked process a scan finds. */
  private owed: { signal: NodeJS.Signals, sent: Set<number> } | undefined
  private discovery: NodeJS.Timeout | undefined
  /** Kill waits under way: meanwhile the passive watch leaves the scanning to them. */
  private active = 0
  private markEmptied: () => void = () => {}
  private readonly emptied = new Promise<void>((resolve) => { this.markEmptied = resolve })

  constructor(child: ChildProcess, readonly marks: readonly string[] = []) {
    if (child.pid === undefined) throw new Error('process group: the child has no pid (spawn failed)')
    this.pgid = child.pid
    this.leaderStart = startTimeOf(child.pid) ?? 0
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.leaderExit = { code, signal, at: new Date() }
        resolve(this.leaderExit)
      })
    })
  }

  private markEmpty(): void {
    this.empty = true
    this.live = 0
    this.markEmptied()
  }

  target(): ScanTarget | undefined {
    if (this.empty) return undefined
    // The leader was reaped and nothing (a zombie included) is left in the group.
    if (this.leaderExit !== undefined && !this.groupGone && !groupExists(this.pgid)) this.groupGone = true
    if (this.groupGone && this.marks.length === 0) {
      this.markEmpty()
      return undefined
    }
    return { pgid: this.pgid, leaderStart: this.leaderStart, group: !this.groupGone, marks: this.marks }
  }

  observe(found: ScanResult): ScanResult {
    let result = found
    // A live process whose own pid is the group id leads a new group: the kernel reuses a pid
    // only once nothing uses it as a group id, so ours emptied first.
    if (this.leaderExit !== undefined && !this.groupGone && (found.group.length === 0 || found.group.includes(this.pgid))) {
      this.groupGone = true
      result = { group: [], marked: found.marked }
    }
    this.live = result.group.length + result.marked.length
    if (this.owed !== undefined) {
      clearTimeout(this.discovery)
      for (const pid of result.marked) {
        if (!this.owed.sent.has(pid)) signalPid(pid, this.owed.signal)
        this.owed.sent.add(pid)
      }
    }
    if (this.leaderExit !== undefined && this.live === 0) this.markEmpty()
    return result
  }

  private scan(): ScanResult {
    const target = this.target()
    return target === undefined ? NOTHING : this.observe(scanShells([target])[0] ?? NOTHING)
  }

  members(): number[] {
    const found = this.scan()
    return [...found.group, ...found.marked]
  }

  /** Live pids by a fresh look that trusts no cached liveness (a kill's wait and survivors), sorted. */
  census(): number[] {
    const [found] = scanShells([{ pgid: this.pgid, leaderStart: this.leaderStart, group: true, marks: this.marks }])
    if (found === undefined) return []
    const holder = startTimeOf(this.pgid)
    const reused = this.groupGone || (this.leaderExit !== undefined && holder !== undefined && holder !== this.leaderStart)
    const result = this.observe(reused ? { group: [], marked: found.marked } : found)
    return [...result.group, ...result.marked].sort((a, b) => a - b)
  }

  /** False when no process was left. An unreaped leader pins the group id: signal it now, marked processes at the next scan. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.empty) return false
    this.owed = { signal, sent: new Set() }
    if (this.leaderExit === undefined) {
      const sent = signalPid(-this.pgid, signal)
      if (this.marks.length > 0) {
        clearTimeout(this.discovery)
        this.discovery = setTimeout(() => this.scan(), DISCOVERY_MS).unref()
      }
      return sent
    }
    const found = this.scan()
    if (found.group.length > 0) signalPid(-this.pgid, signal)
    return found.group.length + found.marked.length > 0
  }

  /** Signal, wait, escalate (kill_shell, job_kill, a foreground timeout, dispose); `onSignalled` once a signal landed. */
  async terminate(request: KillRequest, onSignalled?: () => void): Promise<KillOutcome> {
    const started = Date.now()
    const outcome = (signal_sent: KillOutcome['signal_sent'], force_killed: boolean, survivors: number[]): KillOutcome => ({
      signal_sent, force_killed, exit_code: this.leaderExit?.code ?? null,
      elapsed_ms: Date.now() - started, timeout_ms: request.timeoutMs, survivors,
    })
    if (!this.signal(request.signal)) return outcome('none', false, [])
    onSignalled?.()
    if (await this.waitEmpty(request.timeoutMs, true)) return outcome(request.signal, false, [])
    if (!request.force) return outcome(request.signal, false, this.census())
    this.signal('SIGKILL')
    const empty = await this.waitEmpty(AFTER_SIGKILL_MS, true)
    return outcome(request.signal, true, empty ? [] : this.census())
  }

  /** True once the shell is empty, false after `timeoutMs`. Only a kill's wait (`keepAlive`) holds the host open. */
  async waitEmpty(timeoutMs: number, keepAlive: boolean): Promise<boolean> {
    const maxIntervalMs = keepAlive ? KILL_POLL_MS : WATCH_POLL_MS
    if (keepAlive) this.active++
    try {
      const deadline = Date.now() + timeoutMs
      let interval = 1
      for (;;) {
        const leaderAlive = this.leaderExit === undefined
        const passive = !keepAlive && this.active > 0
        // A kill's wait takes a fresh census each time, so it never ends on stale knowledge.
        const empty = () => (keepAlive ? this.census() : this.members()).length === 0
        if (this.empty || (!leaderAlive && !passive && empty())) return true
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

/** One /proc pass for all `groups`; those still holding a live process (an unreaped leader not counted). */
export function scanGroups(groups: readonly ProcessGroup[]): ProcessGroup[] {
  const looking = groups.flatMap((group) => {
    const target = group.target()
    return target === undefined ? [] : [{ group, target }]
  })
  const found = scanShells(looking.map((each) => each.target))
  return looking.filter(({ group }, i) => {
    const result = group.observe(found[i] ?? NOTHING)
    return result.group.length + result.marked.length > 0
  }).map(({ group }) => group)
}
