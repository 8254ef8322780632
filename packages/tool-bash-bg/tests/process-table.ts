/** A scripted process table (ProcessSyscalls) for the local world's unit tests: processes, environments, signals. */
import type { PidAllocation, ProcessSyscalls } from '../src/local/syscalls.ts'

type Proc = { pgrp: number, session: number, start: number, state?: string, env?: string[] }

/** A process table and a kernel that delivers signals to it; every signal sent is recorded. */
export class Table implements ProcessSyscalls {
  readonly procs = new Map<number, Proc>()
  readonly sent: [number, string][] = []
  /** Signals that end a process; anything else is ignored (a process trapping it). */
  fatal = new Set(['SIGTERM', 'SIGKILL'])
  onDeath: (pid: number) => void = () => {}
  /** The allocator's state; undefined: unreadable (every census stats every process). */
  alloc: PidAllocation | undefined
  /** Stat reads of the table's processes. */
  stats = 0

  add(pid: number, proc: Proc): this {
    this.procs.set(pid, proc)
    return this
  }

  pids(): number[] {
    return [...this.procs.keys()]
  }

  allocation(): PidAllocation | undefined {
    return this.alloc === undefined ? undefined : { ...this.alloc }
  }

  stat(pid: number): string | undefined {
    const proc = this.procs.get(pid)
    // Reads of the table's own processes (the host's ancestry walk reads pids outside it).
    if (proc !== undefined) this.stats++
    if (proc === undefined) return undefined
    // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime prio nice threads itreal starttime
    const fields = [proc.state ?? 'S', 1, proc.pgrp, proc.session, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 1, 0, proc.start]
    return `${pid} (odd) name) ${fields.join(' ')} 0 0\n`
  }

  environ(pid: number): string | undefined {
    const proc = this.procs.get(pid)
    return proc === undefined ? undefined : `${(proc.env ?? []).join('\0')}\0`
  }

  groupExists(pgid: number): boolean {
    return [...this.procs.values()].some((proc) => proc.pgrp === pgid)
  }

  signal(pid: number, signal: NodeJS.Signals): boolean {
    this.sent.push([pid, signal])
    const group = [...this.procs].filter(([, proc]) => proc.pgrp === -pid).map(([each]) => each)
    const targets = pid < 0 ? group : this.procs.has(pid) ? [pid] : []
    if (this.fatal.has(signal)) for (const each of targets) { this.procs.delete(each); this.onDeath(each) }
    return targets.length > 0
  }
}
