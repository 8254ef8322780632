/** Process facts read from /proc (Linux), independent of the shell registry. */
import { readFileSync } from 'node:fs'

export interface ProcStat {
  /** R, S, D, Z (zombie), X (dead), … */
  state: string
  ppid: number
  pgrp: number
  session: number
  /** Start time, in ticks since boot. */
  startTicks: number
}

/** Parse /proc/<pid>/stat; undefined when the process does not exist (or /proc is absent). */
export function procStat(pid: number): ProcStat | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  // The command name (field 2) may contain spaces and parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  const field = (n: number) => Number(fields[n - 3])
  return { state: fields[0] ?? '?', ppid: field(4), pgrp: field(5), session: field(6), startTicks: field(22) }
}
