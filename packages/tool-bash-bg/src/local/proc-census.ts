// Process facts from /proc (Linux): a shell lives while its group, or a process carrying its marks, does.
import { hostSyscalls, type PidAllocation, type ProcessSyscalls } from './syscalls.ts'

/** The environment variables naming, on every process of a shell, the shell and the host that started it. */
export const SHELL_MARK = 'DSH_BG_SHELL'
export const HOST_MARK = 'DSH_BG_HOST'

type Stat = { state: string, ppid: number, pgrp: number, session: number, starttime: number }

/** /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function readStat(sys: ProcessSyscalls, pid: number): Stat | undefined {
  const text = sys.stat(pid)
  if (text === undefined) return undefined
  // After the comm: state(0) ppid(1) pgrp(2) session(3) ... starttime (clock ticks after boot, 19).
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const [ppid = NaN, pgrp = NaN, session = NaN, starttime = NaN] = [1, 2, 3, 19].map((i) => Number(fields[i]))
  const state = fields[0]
  if (state === undefined || !Number.isFinite(pgrp) || !Number.isFinite(starttime)) return undefined
  return { state, ppid, pgrp, session, starttime }
}

/** A live process's group and start time; undefined when gone or a zombie. */
export function liveStat(pid: number, sys: ProcessSyscalls = hostSyscalls): { pgrp: number, starttime: number } | undefined {
  const stat = readStat(sys, pid)
  return stat === undefined || stat.state === 'Z' || stat.state === 'X' ? undefined : stat
}

export function startTimeOf(pid: number, sys: ProcessSyscalls = hostSyscalls): number | undefined {
  return readStat(sys, pid)?.starttime
}

/**
 * One shell to look for: nothing older than its leader belongs to it (pid reuse); `group` is false once the
 * group was observed empty (its id may be someone else's now); `marks` are `NAME=value` entries to match.
 */
export interface ScanTarget {
  pgid: number
  leaderStart: number
  group: boolean
  marks: readonly string[]
}

export type ScanResult = { group: number[], marked: number[] }

let ancestors: { ppid: number, pids: Set<number> } | undefined

/** The host, its ancestors, and their groups and sessions: never signalled, even when they carry a shell's marks. */
export function protectedPids(sys: ProcessSyscalls = hostSyscalls): Set<number> {
  const cached = sys === hostSyscalls
  if (cached && ancestors?.ppid === process.ppid) return ancestors.pids
  const pids = new Set<number>([process.pid, process.ppid, 0, 1])
  let pid = process.pid
  for (let depth = 0; depth < 64 && pid > 1; depth++) {
    pids.add(pid)
    const stat = readStat(sys, pid)
    if (stat === undefined) break
    pids.add(stat.pgrp)
    pids.add(stat.session)
    pid = stat.ppid
  }
  if (cached) ancestors = { ppid: process.ppid, pids }
  return pids
}

/** A process's environment as `\0NAME=value\0…`; undefined for another user's (never one of ours). */
function environ(sys: ProcessSyscalls, pid: number): string | undefined {
  const text = sys.environ(pid)
  return text === undefined ? undefined : `\0${text}`
}

export function envValue(pid: number, name: string, sys: ProcessSyscalls = hostSyscalls): string | undefined {
  return environ(sys, pid)?.split('\0').find((item) => item.startsWith(`${name}=`))?.slice(name.length + 1)
}

/**
 * What the last census learnt of each pid, so the next one skips the syscalls for a process that cannot be any
 * target's: it predates the target's leader, or sits in another group without the target's marks (a process
 * gains marks only by inheriting them at fork, so a non-member keeps its verdict; members are always read
 * again). A cached pid still names the same process unless the allocator handed it out again since: only pids
 * it passed over (the arc from the last pid then to the last pid now) can have been, and a lap (nearly pid_max
 * forks) makes every pid suspect.
 */
type Entry = { start: number, pgrp: number, zombie: boolean, marks: readonly string[] | undefined }
type Seen = { entries: Map<number, Entry>, at: PidAllocation | undefined }
const seenBy = new WeakMap<ProcessSyscalls, Seen>()

/** Whether `pid` lies in the cyclic arc (from, to]. */
function passed(pid: number, from: number, to: number): boolean {
  return from <= to ? pid > from && pid <= to : pid > from || pid <= to
}

/** Bring the cache up to `now`: forget the pids the allocator may have handed out again, or everything. */
function refresh(seen: Seen, now: PidAllocation | undefined): void {
  const then = seen.at
  seen.at = now
  // Half of pid_max in forks is far short of a lap (a lap hands out every free pid), yet never reached within a kill.
  if (now === undefined || then === undefined || now.forks < then.forks || now.forks - then.forks >= now.pidMax / 2) {
    seen.entries.clear()
    return
  }
  if (now.lastPid === then.lastPid) return
  for (const pid of seen.entries.keys()) if (passed(pid, then.lastPid, now.lastPid)) seen.entries.delete(pid)
}

/** The shell marks (`DSH_BG_…=value`) in a process's environment; none for another user's. */
function marksOf(sys: ProcessSyscalls, pid: number): string[] {
  return (sys.environ(pid) ?? '').split('\0').filter((item) => item.startsWith('DSH_BG_'))
}

/** Whether a process with these facts may be one of `target`'s (undefined marks: not read yet, so maybe). */
function mayBelong(entry: Entry, target: ScanTarget): boolean {
  if (entry.zombie || entry.start < target.leaderStart) return false
  if (target.group && entry.pgrp === target.pgid) return true
  return target.marks.length > 0 && (entry.marks === undefined || target.marks.every((mark) => entry.marks?.includes(mark)))
}

/** One pass over /proc for every target; a process's environment is read once, only outside the group, and only when young enough. */
export function scanShells(targets: readonly ScanTarget[], sys: ProcessSyscalls = hostSyscalls): ScanResult[] {
  const found = targets.map((): ScanResult => ({ group: [], marked: [] }))
  if (targets.length === 0) return found
  let seen = seenBy.get(sys)
  if (seen === undefined) seenBy.set(sys, seen = { entries: new Map(), at: undefined })
  refresh(seen, sys.allocation())
  const pids = sys.pids()
  if (pids === undefined) {
    // Not Linux: the group id itself is the only probe.
    targets.forEach((target, i) => { if (target.group && sys.groupExists(target.pgid)) found[i]?.group.push(target.pgid) })
    return found
  }
  const guarded = protectedPids(sys)
  const { entries } = seen
  const look = (pid: number) => {
    const stat = readStat(sys, pid)
    if (stat === undefined) {
      entries.delete(pid)
      return
    }
    const known = entries.get(pid)
    const entry: Entry = {
      start: stat.starttime, pgrp: stat.pgrp, zombie: stat.state === 'Z' || stat.state === 'X',
      marks: known !== undefined && known.start === stat.starttime ? known.marks : undefined,
    }
    entries.set(pid, entry)
    if (entry.zombie) return
    targets.forEach((target, i) => {
      if (entry.start < target.leaderStart) return
      if (target.group && entry.pgrp === target.pgid) found[i]?.group.push(pid)
      else if (target.marks.length > 0 && !guarded.has(pid)) {
        entry.marks ??= marksOf(sys, pid)
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
  const before = seen.at
  refresh(seen, sys.allocation())
  if (before === undefined || seen.at === undefined || entries.size === 0) {
    for (const pid of skipped) look(pid)
  } else if (seen.at.lastPid !== before.lastPid) {
    for (const pid of skipped) if (passed(pid, before.lastPid, seen.at.lastPid)) look(pid)
  }
  return found
}
