// The syscalls the local world stands on (the /proc census, signals, cgroup files), behind small interfaces so the
// pid-reuse, mark, cgroup and leftover logic above them can be driven by a scripted process table in unit tests.
import { spawnSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, statSync, watch, writeFileSync } from 'node:fs'

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

export type PidAllocation = { lastPid: number, forks: number, pidMax: number }

/** A file read again and again through one kept descriptor (a cgroup's `cgroup.events`): one pread, no open. */
export interface KeptFile {
  read(): string | undefined
  close(): void
}

/** The rest of what the local world asks of the kernel: /proc and cgroup files, and the one synchronous sleep. */
export interface LocalSyscalls extends ProcessSyscalls {
  /** A /proc or cgroup file as latin1 text; undefined when it cannot be read. `whole`: one short record, one read. */
  read(path: string, whole?: boolean): string | undefined
  /** False when the kernel refused the write. */
  write(path: string, text: string): boolean
  /** The errno code, or undefined when the directory was made. */
  mkdir(path: string): string | undefined
  /** The errno code, or undefined when it was removed. */
  rmdir(path: string): string | undefined
  /** Names of the subdirectories; none when unreadable. */
  dirs(path: string): string[]
  /** Modification time (ms), or undefined when it is gone. */
  mtime(path: string): number | undefined
  keep(path: string): KeptFile
  /** Call `onChange` on every change of the file (inotify); the disposer, or undefined where it cannot watch. */
  watch(path: string, onChange: () => void): (() => void) | undefined
  /** Whether a child process of this host may write its own pid into `file` (a cgroup's `cgroup.procs`). */
  childWrites(file: string): boolean
  /** Block the thread (host exit, which cannot yield). */
  sleep(ms: number): void
}

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code ?? String(error)

/** The errno code of what `action` threw, or undefined when it did not. */
function attempt(action: () => unknown): string | undefined {
  try {
    action()
    return undefined
  } catch (error) {
    return errno(error)
  }
}

/** This machine's kernel; each instance has its own read buffer and caches. */
export function localSyscalls(): LocalSyscalls {
  /** One buffer for every read: a census reads every process, so no stat and no allocation. */
  const buffer = Buffer.alloc(16 * 1024)
  let pidMax: number | undefined
  const read = (path: string, whole = false): string | undefined => {
    let fd: number
    try {
      fd = openSync(path, 'r')
    } catch {
      return undefined
    }
    try {
      let text = ''
      for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0;) {
        text += buffer.toString('latin1', 0, n)
        if (whole && n < buffer.length) break
      }
      return text
    } catch {
      return undefined
    } finally {
      closeSync(fd)
    }
  }
  return {
    read,
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
    stat: (pid) => read(`/proc/${pid}/stat`, true),
    environ: (pid) => read(`/proc/${pid}/environ`),
    groupExists: (pgid) => [undefined, 'EPERM'].includes(attempt(() => process.kill(-pgid, 0))),
    // It vanished meanwhile: not an error.
    signal: (pid, signal) => attempt(() => process.kill(pid, signal)) === undefined,
    allocation() {
      pidMax ??= Number(read('/proc/sys/kernel/pid_max') ?? NaN)
      const lastPid = Number(read('/proc/sys/kernel/ns_last_pid', true) ?? NaN)
      const forks = Number(/^processes (\d+)$/m.exec(read('/proc/stat') ?? '')?.[1] ?? NaN)
      const known = Number.isSafeInteger(lastPid) && Number.isSafeInteger(forks) && Number.isSafeInteger(pidMax)
      return known ? { lastPid, forks, pidMax } : undefined
    },
    write: (path, text) => attempt(() => writeFileSync(path, text)) === undefined,
    mkdir: (path) => attempt(() => mkdirSync(path)),
    rmdir: (path) => attempt(() => rmdirSync(path)),
    dirs(path) {
      let names: string[] = []
      attempt(() => { names = readdirSync(path, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map(({ name }) => name) })
      return names
    },
    mtime(path) {
      let at: number | undefined
      attempt(() => { at = statSync(path).mtimeMs })
      return at
    },
    keep(path) {
      let fd: number | undefined
      const close = () => {
        if (fd !== undefined) try { closeSync(fd) } catch { /* already gone */ }
        fd = undefined
      }
      return {
        // At offset 0 the kernel renders the file afresh.
        read() {
          try {
            fd ??= openSync(path, 'r')
            return buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0))
          } catch {
            close()
            return undefined
          }
        },
        close,
      }
    },
    watch(path, onChange) {
      try {
        const watcher = watch(path, { persistent: false }, () => onChange())
        // The file removed under the watch ends it; that is nobody's error.
        watcher.on('error', () => watcher.close())
        return () => watcher.close()
      } catch {
        return undefined
      }
    },
    childWrites(file) {
      return spawnSync('/bin/sh', ['-c', 'echo $$ >"$1"', 'sh', file], { stdio: 'ignore', timeout: 5000 }).status === 0
    },
    sleep(ms) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
    },
  }
}
