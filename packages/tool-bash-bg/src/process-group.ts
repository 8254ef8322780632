/**
 * Process-group facts read from /proc (Linux). A background shell is its own process group
 * (detached spawn), so "is the shell still running" means "does any live process of that
 * group remain" — the leader may exit long before a server it started.
 */
import { readdirSync, readFileSync } from 'node:fs'

interface ProcStat {
  state: string
  pgrp: number
  /** Clock ticks after boot. */
  starttime: number
}

/** Parse /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
function readStat(pid: number): ProcStat | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return undefined
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  // After the comm: state(0) ppid(1) pgrp(2) ... starttime(19).
  const state = fields[0]
  const pgrp = Number(fields[2])
  const starttime = Number(fields[19])
  if (state === undefined || !Number.isFinite(pgrp) || !Number.isFinite(starttime)) return undefined
  return { state, pgrp, starttime }
}

/** The start time (clock ticks after boot) of a process, or undefined when it is gone. */
export function startTimeOf(pid: number): number | undefined {
  return readStat(pid)?.starttime
}

/**
 * Live members of each requested group. A member counts only when it is not a zombie and
 * started no earlier than the group's leader: a process that predates the leader cannot
 * belong to the group we created, so a reused id is never mistaken for ours.
 */
export function scanGroups(groups: ReadonlyMap<number, number>): Map<number, number[]> {
  const found = new Map<number, number[]>()
  for (const pgid of groups.keys()) found.set(pgid, [])
  if (groups.size === 0) return found
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return scanWithoutProc(groups, found)
  }
  for (const entry of entries) {
    const code = entry.charCodeAt(0)
    if (code < 48 || code > 57) continue
    const pid = Number(entry)
    const stat = readStat(pid)
    if (stat === undefined) continue
    const leaderStart = groups.get(stat.pgrp)
    if (leaderStart === undefined) continue
    if (stat.state === 'Z' || stat.state === 'X') continue
    if (stat.starttime < leaderStart) continue
    found.get(stat.pgrp)?.push(pid)
  }
  return found
}

/** Without /proc (not Linux) the group id itself is the only probe: kill(-pgid, 0). */
function scanWithoutProc(groups: ReadonlyMap<number, number>, found: Map<number, number[]>): Map<number, number[]> {
  for (const pgid of groups.keys()) {
    try {
      process.kill(-pgid, 0)
      found.set(pgid, [pgid])
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPERM') found.set(pgid, [pgid])
    }
  }
  return found
}

/** Live members of one group (see {@link scanGroups}). */
export function groupMembers(pgid: number, leaderStart: number): number[] {
  return scanGroups(new Map([[pgid, leaderStart]])).get(pgid) ?? []
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

/** Send a signal to a whole process group; a group that vanished meanwhile is not an error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}
