/**
 * What survived a kill, measured on /proc by this package — not taken from the registry that
 * did the killing, so a registry that lost track of a process cannot turn it into a success.
 */
import { procPids, procStat } from './proc.ts'

/**
 * Live (non-zombie) processes of the shell's group `pgid` now. `leaderStart` is the leader's
 * start time (ticks since boot) read before anything was signalled, or undefined when the
 * leader had already been reaped. A live process holding the group's number that is not that
 * leader leads a newer group — the kernel hands a pid out again only once nothing uses it as a
 * group id, so the shell's group emptied first — and then nothing of the shell survives.
 * Members that started before the leader cannot be the shell's and are not counted.
 * Undefined when /proc cannot be read (not Linux).
 */
export function survivorsOf(pgid: number, leaderStart: number | undefined): number[] | undefined {
  // The kernel's answer first, no scan: with no process at all in the group (zombies included),
  // nothing survived. Signal 0 delivers nothing; it only asks.
  if (!groupHasProcesses(pgid)) return []
  const pids = procPids()
  if (pids === undefined) return undefined
  const holder = procStat(pgid)
  if (holder !== undefined && holder.startTicks !== leaderStart) return []
  const found: number[] = []
  for (const pid of pids) {
    const stat = procStat(pid)
    if (stat === undefined || stat.pgrp !== pgid || stat.state === 'Z' || stat.state === 'X') continue
    if (leaderStart !== undefined && stat.startTicks < leaderStart) continue
    found.push(pid)
  }
  return found.sort((a, b) => a - b)
}

/** kill(-pgid, 0): whether any process (a zombie too) is in the group. */
function groupHasProcesses(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
