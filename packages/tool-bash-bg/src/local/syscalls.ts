// The process syscalls the local world's census and kills stand on, behind one small interface so the pid-reuse
// and mark logic above them can be driven by a scripted process table in unit tests.
import { closeSync, openSync, readdirSync, readSync } from 'node:fs'

export interface ProcessSyscalls {
  /** Every pid /proc lists; undefined where there is no /proc (not Linux). */
  pids(): number[] | undefined
  /** /proc/<pid>/stat as text; undefined when gone. */
  stat(pid: number): string | undefined
  /** /proc/<pid>/environ as text (`NAME=value\0…`); undefined when gone or another user's. */
  environ(pid: number): string | undefined
  /** Whether any process (a zombie included) is in the group. */
  groupExists(pgid: number): boolean
  /** Signal a group (negative) or one process; false when nothing received it. */
  signal(pid: number, signal: NodeJS.Signals): boolean
  /** The pid allocator's state (undefined when unreadable): the last pid handed out, forks since boot, pid_max. */
  allocation(): PidAllocation | undefined
}

export interface PidAllocation {
  lastPid: number
  forks: number
  pidMax: number
}

let pidMax: number | undefined

/** One buffer for every /proc read: a scan reads every process, so no stat and no allocation. */
const BUFFER = Buffer.alloc(16 * 1024)

/**
 * A /proc or cgroup file as latin1 text; undefined when it cannot be read (gone, or another user's). `whole`: the
 * file is one short record that the kernel hands over in one read (stat), so a short read is its end: one syscall
 * fewer per process in every census.
 */
export function readProc(path: string, whole = false): string | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return undefined
  }
  try {
    let text = ''
    for (let n; (n = readSync(fd, BUFFER, 0, BUFFER.length, null)) > 0;) {
      text += BUFFER.toString('latin1', 0, n)
      if (whole && n < BUFFER.length) break
    }
    return text
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/** This machine's kernel. */
export const hostSyscalls: ProcessSyscalls = {
  pids() {
    let entries: string[]
    try {
      entries = readdirSync('/proc')
    } catch {
      return undefined
    }
    const pids: number[] = []
    for (const entry of entries) {
      const code = entry.charCodeAt(0)
      if (code >= 48 && code <= 57) pids.push(Number(entry))
    }
    return pids
  },
  stat: (pid) => readProc(`/proc/${pid}/stat`, true),
  environ: (pid) => readProc(`/proc/${pid}/environ`),
  groupExists(pgid) {
    try {
      process.kill(-pgid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  },
  signal(pid, signal) {
    try {
      process.kill(pid, signal)
      return true
    } catch {
      // It vanished meanwhile: not an error.
      return false
    }
  },
  allocation() {
    pidMax ??= Number(readProc('/proc/sys/kernel/pid_max') ?? NaN)
    const lastPid = Number(readProc('/proc/sys/kernel/ns_last_pid', true) ?? NaN)
    const forks = Number(/^processes (\d+)$/m.exec(readProc('/proc/stat') ?? '')?.[1] ?? NaN)
    const known = Number.isSafeInteger(lastPid) && Number.isSafeInteger(forks) && Number.isSafeInteger(pidMax)
    return known ? { lastPid, forks, pidMax } : undefined
  },
}
