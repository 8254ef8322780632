import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { ShellRecord } from '@gencode-ai/dsh-tool-bash-bg'
import { procStat } from './proc.ts'

let cached: { ppid: number, pids: Set<number> } | undefined

/**
 * The host process, its ancestors, and their process groups and sessions: never signalled.
 * Walked once and kept while the host's parent stays the same (a re-parented host walks again).
 */
export function protectedPids(): Set<number> {
  if (cached?.ppid === process.ppid) return cached.pids
  const pids = new Set<number>([process.pid, process.ppid, 0, 1])
  const self = procStat(process.pid)
  if (self !== undefined) {
    pids.add(self.pgrp)
    pids.add(self.session)
  }
  let pid = process.ppid
  for (let depth = 0; depth < 64 && pid > 1; depth++) {
    pids.add(pid)
    const stat = procStat(pid)
    if (stat === undefined) break
    pids.add(stat.pgrp)
    pids.add(stat.session)
    pid = stat.ppid
  }
  cached = { ppid: process.ppid, pids }
  return pids
}

/**
 * Refuse to act on a record whose pid could hit the wrong processes: the host or its ancestors
 * (a corrupt or forged record).
 */
export function assertSignallable(record: ShellRecord): void {
  if (!Number.isSafeInteger(record.pid) || record.pid <= 1 || protectedPids().has(record.pid)) {
    throw new HarnessError(
      `refusing to signal shell ${record.id}: pid ${record.pid} is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`,
      'SHELL_PROTECTED_PID',
    )
  }
}

/**
 * Whether the shell's pid now belongs to a newer process, which means its group is empty: the
 * kernel keeps a pid allocated while any process still uses it as a group id, so once the
 * leader has been reaped a live process with that pid proves the group emptied and the pid was
 * reused. While `leader_exited_at` is null the leader is an unreaped child of the host and its
 * pid cannot have been reused. (No wall-clock comparison: the record carries no /proc start
 * ticks, and a clock step would make a live shell look reused.)
 */
export function leaderPidReused(record: ShellRecord): boolean {
  return record.leader_exited_at !== null && procStat(record.pid) !== undefined
}
