/**
 * Process facts read from /proc (Linux): the one place this package (and, through the
 * registry, kill_shell) scans it. A background shell is its own process group (detached
 * spawn), and every process it starts carries its environment marker, so "is the shell still
 * running" means "does a live process of that group, or one carrying its marker, remain" —
 * the leader may exit long before a server it started, and a `setsid` child or a
 * double-forked daemon leaves the group but keeps the marker.
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs'

/** The environment variable naming the shell on every process it starts. */
export const SHELL_MARK = 'DSH_BG_SHELL'
/** The environment variable naming the host (plugin instance) that started the shell. */
export const HOST_MARK = 'DSH_BG_HOST'

/** One buffer for every /proc read: open, read, close — no stat, no allocation (a scan reads every process). */
const BUFFER = Buffer.alloc(16 * 1024)

/** A /proc file as latin1 text, whole; undefined when it cannot be read (gone, or another user's). */
function readProc(path: string): string | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    let text = ''
    for (;;) {
      const n = readSync(fd, BUFFER, 0, BUFFER.length, null)
      if (n === 0) return text
      text += BUFFER.toString('latin1', 0, n)
    }
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

interface ProcStat {
  state: string
  ppid: number
  pgrp: number
  session: number
  /** Clock ticks after boot. */
  starttime: number
}

/** Parse /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function readStat(pid: number): ProcStat | undefined {
  const text = readProc(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // After the comm: state(0) ppid(1) pgrp(2) session(3) ... starttime(19).
  const state = fields[0]
  const [ppid, pgrp, session, starttime] = [fields[1], fields[2], fields[3], fields[19]].map(Number)
  if (state === undefined || ppid === undefined || pgrp === undefined || session === undefined || starttime === undefined) return undefined
  if (!Number.isFinite(pgrp) || !Number.isFinite(starttime)) return undefined
  return { state, ppid, pgrp, session, starttime }
}

/** The start time (clock ticks after boot) of a process, or undefined when it is gone. */
export function startTimeOf(pid: number): number | undefined {
  return readStat(pid)?.starttime
}

/** What to look for: a group (while it may still have members) and the environment marks of one shell. */
export interface ScanTarget {
  pgid: number
  /** The leader's start time: nothing older can belong to the shell (pid reuse). */
  leaderStart: number
  /** False once the group was observed empty: its id may be someone else's now. */
  group: boolean
  /** `NAME=value` entries a process's environment must all hold to count as the shell's; none = group only. */
  marks: readonly string[]
}

export interface ScanResult {
  /** Live members of the group. */
  group: number[]
  /** Live processes outside the group that carry the shell's marks. */
  marked: number[]
}

let ancestors: { ppid: number, pids: Set<number> } | undefined

/**
 * The host process, its ancestors, and their process groups and sessions: never signalled, not
 * even when they carry a shell's marks (a host started from inside a background shell).
 */
export function protectedPids(): Set<number> {
  if (ancestors?.ppid === process.ppid) return ancestors.pids
  const pids = new Set<number>([process.pid, process.ppid, 0, 1])
  let pid = process.pid
  for (let depth = 0; depth < 64 && pid > 1; depth++) {
    pids.add(pid)
    const stat = readStat(pid)
    if (stat === undefined) break
    pids.add(stat.pgrp)
    pids.add(stat.session)
    pid = stat.ppid
  }
  ancestors = { ppid: process.ppid, pids }
  return pids
}

/** The value of one environment variable of a process, when it can be read. */
export function envValue(pid: number, name: string): string | undefined {
  const text = readProc(`/proc/${pid}/environ`)
  const entry = text?.split('\0').find((item) => item.startsWith(`${name}=`))
  return entry?.slice(name.length + 1)
}

function hasMarks(pid: number, marks: readonly string[]): boolean {
  // Another user's process (EACCES) is never one of ours.
  const text = readProc(`/proc/${pid}/environ`)
  if (text === undefined) return false
  const environ = `\0${text}`
  return marks.every((mark) => environ.includes(`\0${mark}\0`))
}

/**
 * One pass over /proc for every target. A process counts only when it is not a zombie and
 * started no earlier than the target's leader: one that predates the leader cannot be the
 * shell's, so a reused id is never mistaken for ours. Its environment is read only when it is
 * that young and outside the group, which keeps the marker scan to a few reads.
 */
export function scanShells(targets: readonly ScanTarget[]): ScanResult[] {
  const found = targets.map((): ScanResult => ({ group: [], marked: [] }))
  if (targets.length === 0) return found
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return scanWithoutProc(targets, found)
  }
  const oldest = Math.min(...targets.map((target) => target.leaderStart))
  const guarded = protectedPids()
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code < 48 || code > 57) continue
    const pid = Number(entry)
    const stat = readStat(pid)
    if (stat === undefined || stat.starttime < oldest || stat.state === 'Z' || stat.state === 'X') continue
    targets.forEach((target, i) => {
      if (stat.starttime < target.leaderStart) return
      if (target.group && stat.pgrp === target.pgid) found[i]?.group.push(pid)
      else if (target.marks.length > 0 && !guarded.has(pid) && hasMarks(pid, target.marks)) found[i]?.marked.push(pid)
    })
  }
  return found
}

/** Without /proc (not Linux) the group id itself is the only probe: kill(-pgid, 0). */
function scanWithoutProc(targets: readonly ScanTarget[], found: ScanResult[]): ScanResult[] {
  targets.forEach((target, i) => {
    if (target.group && groupExists(target.pgid)) found[i]?.group.push(target.pgid)
  })
  return found
}

/** Whether any process (a zombie included) is in the group: kill(-pgid, 0), no /proc scan. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Send a signal to a whole process group (negative) or one process; one that vanished meanwhile is not an error. */
export function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}
