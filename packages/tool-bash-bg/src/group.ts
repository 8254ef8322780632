/**
 * One spawned process group and what we know about it. The leader is our own child, so its
 * pid (the group id) cannot be reused until Node reaps it; after that, the group is alive only
 * while /proc shows a live member that started no earlier than the leader. Once observed
 * empty, the group is never signalled again (pid reuse).
 */
import type { ChildProcess } from 'node:child_process'
import { groupExists, groupMembers, signalGroup, startTimeOf } from './process-group.ts'

export interface LeaderExit {
  code: number | null
  signal: NodeJS.Signals | null
  at: Date
}

export class ProcessGroup {
  readonly pgid: number
  readonly leaderStart: number
  /** Set once Node reaped the leader. */
  leaderExit: LeaderExit | undefined
  readonly exited: Promise<LeaderExit>
  private gone = false

  constructor(child: ChildProcess) {
    if (child.pid === undefined) throw new Error('process group: the child has no pid (spawn failed)')
    this.pgid = child.pid
    // Read before the event loop can reap the leader: its /proc entry exists until then.
    this.leaderStart = startTimeOf(child.pid) ?? 0
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.leaderExit = { code, signal, at: new Date() }
        resolve(this.leaderExit)
      })
    })
  }

  /** Whether the group was observed empty (then it stays empty for us). */
  get empty(): boolean {
    return this.gone
  }

  /** Live members now (pids). Observing none after the leader exited marks the group gone. */
  members(): number[] {
    if (this.gone) return []
    if (this.leaderExit === undefined) return groupMembers(this.pgid, this.leaderStart)
    // The leader was reaped. No process left in the group: done, without scanning /proc.
    if (!groupExists(this.pgid)) return this.markGone()
    const pids = groupMembers(this.pgid, this.leaderStart)
    // A live process whose own pid is the group id leads a new group: the kernel hands a pid
    // out again only once nothing uses it as a group id, so ours emptied first (pid reuse).
    if (pids.length === 0 || pids.includes(this.pgid)) return this.markGone()
    return pids
  }

  private markGone(): number[] {
    this.gone = true
    return []
  }

  /** Signal every member; a no-op (false) for a group already observed empty. */
  signal(signal: NodeJS.Signals): boolean {
    if (this.gone) return false
    // While the leader is unreaped its pid pins the group id; afterwards, look before signalling.
    if (this.leaderExit !== undefined && this.members().length === 0) return false
    return signalGroup(this.pgid, signal)
  }

  /**
   * Resolve true as soon as the group is empty, false after `timeoutMs`. Polls /proc with a
   * growing interval (capped at `maxIntervalMs`); the leader's exit wakes it at once. Only a
   * wait someone awaits (`keepAlive`, a kill) holds the host open; watching a running shell never does.
   */
  async waitEmpty(timeoutMs: number, maxIntervalMs: number, keepAlive: boolean): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    let interval = 5
    for (;;) {
      if (this.leaderExit !== undefined && this.members().length === 0) return true
      const left = deadline - Date.now()
      if (left <= 0) return false
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(interval, left))
        if (!keepAlive) timer.unref()
        if (this.leaderExit === undefined) void this.exited.then(() => { clearTimeout(timer); resolve() })
      })
      interval = Math.min(interval * 2, maxIntervalMs)
    }
  }
}
