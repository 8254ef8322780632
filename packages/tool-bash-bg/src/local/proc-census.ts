// Process facts from /proc (Linux): a shell lives while its group, or a process carrying its marks, does.
import { constants } from 'node:os'
import type { PidAllocation, ProcessSyscalls } from './syscalls.ts'

/** The environment variables naming, on every process of a shell, the shell and the host that started it. */
export const SHELL_MARK = 'DSH_BG_SHELL'
export const HOST_MARK = 'DSH_BG_HOST'

/** `threads`, `wchan` and `status` (the wait status, Linux 3.5+) matter for a zombie: see `zombieExit`. */
type Stat = {
  state: string
  ppid: number
  pgrp: number
  session: number
  starttime: number
  zombie: boolean
  threads: number
  wchan: number
  status: number
}

/** The one parser of /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function parseStat(text: string | undefined): Stat | undefined {
  if (text === undefined) return undefined
  // After the comm: state(0) ppid(1) pgrp(2) session(3) ... num_threads(17) starttime (clock ticks after boot, 19)
  // ... wchan(32) ... exit_code(49).
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const [ppid = NaN, pgrp = NaN, session = NaN, threads = NaN, starttime = NaN, wchan = NaN, status = NaN] = [1, 2, 3, 17, 19, 32, 49]
    .map((i) => Number(fields[i]))
  const state = fields[0]
  if (state === undefined || !Number.isFinite(pgrp) || !Number.isFinite(starttime)) return undefined
  return { state, ppid, pgrp, session, starttime, zombie: state === 'Z' || state === 'X', threads, wchan, status }
}

/** A signal's name from its number, as Node names a child's terminating signal. */
function signalName(number: number): NodeJS.Signals | undefined {
  return Object.entries(constants.signals).find(([, each]) => each === number)?.[0] as NodeJS.Signals | undefined
}

/** One shell to look for: nothing older than its leader; `group` false once the group was seen empty; `NAME=value` marks. */
export interface ScanTarget {
  pgid: number
  leaderStart: number
  group: boolean
  marks: readonly string[]
}

export type ScanResult = { group: number[], marked: number[] }

/**
 * What the last census learnt of a pid, so the next skips a process that cannot be any target's: older than the
 * leader, or in another group without the marks (marks are only inherited at fork; members are always read again).
 * A cached pid is the same process unless the allocator passed over it since (the arc of last pids), or lapped.
 */
type Entry = { start: number, pgrp: number, zombie: boolean, marks: readonly string[] | undefined }

/** Whether `pid` lies in the cyclic arc (from, to]. */
function passed(pid: number, from: number, to: number): boolean {
  return from <= to ? pid > from && pid <= to : pid > from || pid <= to
}

/** Whether a process with these facts may be one of `target`'s (undefined marks: not read yet, so maybe). */
function mayBelong(entry: Entry, target: ScanTarget): boolean {
  if (entry.zombie || entry.start < target.leaderStart) return false
  if (target.group && entry.pgrp === target.pgid) return true
  return target.marks.length > 0 && (entry.marks === undefined || target.marks.every((mark) => entry.marks?.includes(mark)))
}

/** The /proc census of one kernel (`sys`), with what it remembers between looks: the pid cache and the host's ancestry. */
export class ProcessCensus {
  private readonly entries = new Map<number, Entry>()
  private at: PidAllocation | undefined
  private ancestors: { ppid: number, pids: Set<number> } | undefined

  constructor(readonly sys: ProcessSyscalls) {}

  stat(pid: number): Stat | undefined {
    return parseStat(this.sys.stat(pid))
  }

  /** A live process's group and start time; undefined when gone or a zombie. */
  liveStat(pid: number): Stat | undefined {
    const stat = this.stat(pid)
    return stat?.zombie === false ? stat : undefined
  }

  startTime(pid: number): number | undefined {
    return this.stat(pid)?.starttime
  }

  /**
   * How `pid` (start time `start`) ended, read from its zombie before its parent (another process) reaps it: the wait
   * status its parent will read. The kernel shows that status, and a wchan of 1, only to a process allowed to read it
   * (else both read 0); a zombie whose other threads live is a leader thread that exited alone. Undefined unless `pid`
   * is that zombie, alone, and readable.
   */
  zombieExit(pid: number, start: number): { code: number | null, signal: NodeJS.Signals | null } | undefined {
    const stat = this.stat(pid)
    if (stat?.zombie !== true || stat.starttime !== start) return undefined
    if (stat.threads !== 1 || stat.wchan !== 1 || !Number.isInteger(stat.status)) return undefined
    const number = stat.status & 0x7f
    if (number === 0) return { code: (stat.status >> 8) & 0xff, signal: null }
    const signal = signalName(number)
    return signal === undefined ? undefined : { code: null, signal }
  }

  /** The host, its ancestors, and their groups and sessions: never signalled, even when they carry a shell's marks. */
  protectedPids(): Set<number> {
    if (this.ancestors?.ppid === process.ppid) return this.ancestors.pids
    const pids = new Set<number>([process.pid, process.ppid, 0, 1])
    let pid = process.pid
    for (let depth = 0; depth < 64 && pid > 1; depth++) {
      pids.add(pid)
      const stat = this.stat(pid)
      if (stat === undefined) break
      pids.add(stat.pgrp)
      pids.add(stat.session)
      pid = stat.ppid
    }
    this.ancestors = { ppid: process.ppid, pids }
    return pids
  }

  /** Bring the cache up to `now`: forget the pids the allocator may have handed out again, or everything. */
  private refresh(now: PidAllocation | undefined): void {
    const then = this.at
    this.at = now
    // Half of pid_max in forks is far short of a lap (a lap hands out every free pid), yet never reached within a kill.
    if (now === undefined || then === undefined || now.forks < then.forks || now.forks - then.forks >= now.pidMax / 2) {
      this.entries.clear()
      return
    }
    if (now.lastPid === then.lastPid) return
    for (const pid of this.entries.keys()) if (passed(pid, then.lastPid, now.lastPid)) this.entries.delete(pid)
  }

  /** The shell marks (`DSH_BG_…=value`) in a process's environment; none for another user's. */
  private marksOf(pid: number): string[] {
    return (this.sys.environ(pid) ?? '').split('\0').filter((item) => item.startsWith('DSH_BG_'))
  }

  /** One pass over /proc for every target; a process's environment is read once, only outside the group, and only when young enough. */
  scan(targets: readonly ScanTarget[]): ScanResult[] {
    const found = targets.map((): ScanResult => ({ group: [], marked: [] }))
    if (targets.length === 0) return found
    const { sys, entries } = this
    this.refresh(sys.allocation())
    const pids = sys.pids()
    if (pids === undefined) {
      // Not Linux: the group id itself is the only probe.
      targets.forEach((target, i) => { if (target.group && sys.groupExists(target.pgid)) found[i]?.group.push(target.pgid) })
      return found
    }
    const guarded = this.protectedPids()
    const look = (pid: number) => {
      const stat = this.stat(pid)
      if (stat === undefined) {
        entries.delete(pid)
        return
      }
      const known = entries.get(pid)
      const entry: Entry = {
        start: stat.starttime, pgrp: stat.pgrp, zombie: stat.zombie,
        marks: known !== undefined && known.start === stat.starttime ? known.marks : undefined,
      }
      entries.set(pid, entry)
      if (entry.zombie) return
      targets.forEach((target, i) => {
        if (entry.start < target.leaderStart) return
        if (target.group && entry.pgrp === target.pgid) found[i]?.group.push(pid)
        else if (target.marks.length > 0 && !guarded.has(pid)) {
          entry.marks ??= this.marksOf(pid)
          if (target.marks.every((mark) => entry.marks?.includes(mark))) found[i]?.marked.push(pid)
        }
      })
    }
    const listed = new Set<number>()
    const skipped: number[] = []
    for (const pid of pids) {
      listed.add(pid)
      const entry = entries.get(pid)
      if (entry !== undefined && !targets.some((target) => mayBelong(entry, target))) skipped.push(pid)
      else look(pid)
    }
    for (const pid of entries.keys()) if (!listed.has(pid)) entries.delete(pid)
    // Pids handed out while this pass ran may have reused a skipped one: look at those after all.
    const before = this.at
    this.refresh(sys.allocation())
    if (before === undefined || this.at === undefined || entries.size === 0) {
      for (const pid of skipped) look(pid)
    } else if (this.at.lastPid !== before.lastPid) {
      for (const pid of skipped) if (passed(pid, before.lastPid, this.at.lastPid)) look(pid)
    }
    return found
  }
}
