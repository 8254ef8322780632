// Process facts from /proc (Linux): a shell lives while its group, or a process carrying its marks, does.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs'

/** The environment variables naming, on every process of a shell, the shell and the host that started it. */
export const SHELL_MARK = 'DSH_BG_SHELL'
export const HOST_MARK = 'DSH_BG_HOST'

/** One buffer for every /proc read: a scan reads every process, so no stat and no allocation. */
const BUFFER = Buffer.alloc(16 * 1024)

/** A /proc file as latin1 text; undefined when it cannot be read (gone, or another user's). */
function readProc(path: string): string | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    let text = ''
    for (let n; (n = readSync(fd, BUFFER, 0, BUFFER.length, null)) > 0;) text += BUFFER.toString('latin1', 0, n)
    return text
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/** /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function readStat(pid: number): { state: string, ppid: number, pgrp: number, session: number, starttime: number } | undefined {
  const text = readProc(`/proc/${pid}/stat`)
  if (text === undefined) return undefined
  // After the comm: state(0) ppid(1) pgrp(2) session(3) ... starttime (clock ticks after boot, 19).
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const [ppid = NaN, pgrp = NaN, session = NaN, starttime = NaN] = [1, 2, 3, 19].map((i) => Number(fields[i]))
  const state = fields[0]
  if (state === undefined || !Number.isFinite(pgrp) || !Number.isFinite(starttime)) return undefined
  return { state, ppid, pgrp, session, starttime }
}

export function startTimeOf(pid: number): number | undefined {
  return readStat(pid)?.starttime
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

/** A process's environment as `\0NAME=value\0…`; undefined for another user's (never one of ours). */
function environ(pid: number): string | undefined {
  const text = readProc(`/proc/${pid}/environ`)
  return text === undefined ? undefined : `\0${text}`
}

export function envValue(pid: number, name: string): string | undefined {
  return environ(pid)?.split('\0').find((item) => item.startsWith(`${name}=`))?.slice(name.length + 1)
}

/** One pass over /proc for every target; a process's environment is read only outside the group, and only when young enough. */
export function scanShells(targets: readonly ScanTarget[]): ScanResult[] {
  const found = targets.map((): ScanResult => ({ group: [], marked: [] }))
  if (targets.length === 0) return found
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // Not Linux: the group id itself is the only probe.
    targets.forEach((target, i) => { if (target.group && groupExists(target.pgid)) found[i]?.group.push(target.pgid) })
    return found
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

function hasMarks(pid: number, marks: readonly string[]): boolean {
  const text = environ(pid)
  return text !== undefined && marks.every((mark) => text.includes(`\0${mark}\0`))
}

/** Whether any process (a zombie included) is in the group. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Signal a group (negative) or one process; one that vanished meanwhile is not an error. */
export function signalPid(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}
