// Process facts from /proc (Linux): a shell lives while its group, or a process carrying its marks, does.
import { hostSyscalls, type ProcessSyscalls } from './syscalls.ts'

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

/** One pass over /proc for every target; a process's environment is read only outside the group, and only when young enough. */
export function scanShells(targets: readonly ScanTarget[], sys: ProcessSyscalls = hostSyscalls): ScanResult[] {
  const found = targets.map((): ScanResult => ({ group: [], marked: [] }))
  if (targets.length === 0) return found
  const pids = sys.pids()
  if (pids === undefined) {
    // Not Linux: the group id itself is the only probe.
    targets.forEach((target, i) => { if (target.group && sys.groupExists(target.pgid)) found[i]?.group.push(target.pgid) })
    return found
  }
  const oldest = Math.min(...targets.map((target) => target.leaderStart))
  const guarded = protectedPids(sys)
  for (const pid of pids) {
    const stat = readStat(sys, pid)
    if (stat === undefined || stat.starttime < oldest || stat.state === 'Z' || stat.state === 'X') continue
    targets.forEach((target, i) => {
      if (stat.starttime < target.leaderStart) return
      if (target.group && stat.pgrp === target.pgid) found[i]?.group.push(pid)
      else if (target.marks.length > 0 && !guarded.has(pid) && hasMarks(sys, pid, target.marks)) found[i]?.marked.push(pid)
    })
  }
  return found
}

function hasMarks(sys: ProcessSyscalls, pid: number, marks: readonly string[]): boolean {
  const text = environ(sys, pid)
  return text !== undefined && marks.every((mark) => text.includes(`\0${mark}\0`))
}
