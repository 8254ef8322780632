/** A cgroup per shell where the host may create one: membership a process cannot leave by setsid, a scrubbed environment or a new title. */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, statSync, watch, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { readProc } from './syscalls.ts'

/** How a shell's processes are tracked: a cgroup v2 (killed atomically), a v1 freezer cgroup (frozen, then killed), or none. */
type CgroupKind = 'cgroup-v2' | 'cgroup-v1'

export interface ShellCgroup {
  readonly kind: CgroupKind
  readonly path: string
  /** The argv that joins the cgroup before it runs `argv` (so nothing it starts is ever outside). */
  wrap(argv: readonly [string, ...string[]]): [string, ...string[]]
  /** Move `pid` in (the host's own write: for a leader whose join has not run yet, so has no children); false when refused. */
  adopt(pid: number): boolean
  /** Live members, nested cgroups included (never the host: it is not in the cgroup). */
  pids(): number[]
  /** Signal every member; SIGKILL is atomic (cgroup.kill, or frozen first) so a forking process cannot outrun it. */
  signal(signal: NodeJS.Signals): number
  /** Remove the cgroup once it is empty; false while members remain. */
  remove(): boolean
  /**
   * Whether a live process is in it or below (v2 `cgroup.events`: a member leaves it as it exits, before it is a
   * zombie); undefined where the kind has no such file (v1).
   */
  populated?(): boolean | undefined
  /** Call `onChange` whenever `populated` flips (inotify on `cgroup.events`); the disposer, or undefined where it cannot watch. */
  watch?(onChange: () => void): (() => void) | undefined
  /** Whether a process ever ran in it (v2 `cpu.stat` usage): its join happened, though every member may have exited since. */
  ran?(): boolean
}

interface CgroupHost {
  readonly kind: CgroupKind
  /** The host's directory of shell cgroups. */
  readonly path: string
  /** A new shell cgroup (the host directory re-made if it was removed); undefined when mkdir fails. */
  create(shellId: string): ShellCgroup | undefined
  /** SIGKILL every shell cgroup's members (host exit), without yielding. */
  killAll(): void
  /** Remove the empty shell cgroups, and the host's directory once nothing is left in it. */
  remove(): void
}

/** Joins the cgroup named by $1 (its cgroup.procs), then runs the rest; a failed join still runs the command (tracked by marks). */
const JOIN = 'echo $$ >"$1" 2>/dev/null; shift; exec "$@"'

/** The buffer cgroup.events is read into through its kept descriptor (one pread, no open or stat). */
const BUFFER = Buffer.alloc(16 * 1024)

function readLines(path: string): string[] {
  return (readProc(path) ?? '').split('\n').filter((line) => line !== '')
}

function write(path: string, text: string): boolean {
  try {
    writeFileSync(path, text)
    return true
  } catch {
    return false
  }
}

function signalEach(pids: readonly number[], signal: NodeJS.Signals): number {
  let sent = 0
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
      sent++
    } catch {
      // Gone meanwhile.
    }
  }
  return sent
}

/** Where this process sits in the v2 hierarchy and in the v1 freezer hierarchy, from /proc/self. */
function ownCgroups(): { v2?: string, freezer?: string } {
  const mounts = readLines('/proc/self/mountinfo').map((line) => {
    const [left = '', right = ''] = line.split(' - ')
    const fields = left.split(' ')
    const [fstype = '', , options = ''] = right.split(' ')
    return { root: fields[3] ?? '', point: fields[4] ?? '', fstype, options: options.split(',') }
  })
  const found: { v2?: string, freezer?: string } = {}
  for (const line of readLines('/proc/self/cgroup')) {
    const [id, controllers = '', ...rest] = line.split(':')
    const path = rest.join(':')
    const mount = id === '0' && controllers === ''
      ? mounts.find((each) => each.fstype === 'cgroup2')
      : controllers.split(',').includes('freezer') ? mounts.find((each) => each.fstype === 'cgroup' && each.options.includes('freezer')) : undefined
    // A path outside the mount's root (another cgroup namespace's view) cannot be reached from here.
    if (mount === undefined || !path.startsWith(mount.root)) continue
    const dir = join(mount.point, path.slice(mount.root.length))
    if (mount.fstype === 'cgroup2') found.v2 = dir
    else found.freezer = dir
  }
  return found
}

function shellCgroup(kind: CgroupKind, path: string): ShellCgroup {
  const procs = join(path, 'cgroup.procs')
  const events = join(path, 'cgroup.events')
  // Kept open from the first look until removal: a read at offset 0 renders the file afresh, without an open.
  let eventsFd: number | undefined
  const closeEvents = () => {
    if (eventsFd !== undefined) try { closeSync(eventsFd) } catch { /* already gone */ }
    eventsFd = undefined
  }
  // A member may make cgroups of its own below (a container runtime): they are still this shell's.
  const pids = (): number[] => [
    ...readLines(procs).map(Number).filter((pid) => pid > 0),
    ...readdirNames(path).flatMap((child) => shellCgroup(kind, join(path, child)).pids()),
  ]
  return {
    kind,
    path,
    wrap: (argv) => ['/bin/sh', '-c', JOIN, 'sh', procs, ...argv],
    adopt: (pid) => write(procs, String(pid)),
    pids,
    signal(signal) {
      const members = pids()
      if (signal !== 'SIGKILL' || members.length === 0) return signalEach(members, signal)
      if (kind === 'cgroup-v2' && write(join(path, 'cgroup.kill'), '1')) return members.length
      // v1: a frozen cgroup cannot fork while its members are killed.
      const frozen = kind === 'cgroup-v1' && write(join(path, 'freezer.state'), 'FROZEN')
      const sent = signalEach(pids(), 'SIGKILL')
      if (frozen) write(join(path, 'freezer.state'), 'THAWED')
      return sent
    },
    remove() {
      closeEvents()
      // One rmdir in the common case; only a cgroup with cgroups of its own below (EBUSY) needs a walk first.
      try {
        rmdirSync(path)
        return true
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT') return true
        if (code !== 'EBUSY' && code !== 'ENOTEMPTY') return false
      }
      const children = readdirNames(path)
      if (children.length === 0) return false
      for (const child of children) shellCgroup(kind, join(path, child)).remove()
      try {
        rmdirSync(path)
        return true
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'ENOENT'
      }
    },
    ...kind === 'cgroup-v2' ? {
      populated() {
        let text: string
        try {
          eventsFd ??= openSync(events, 'r')
          text = BUFFER.toString('latin1', 0, readSync(eventsFd, BUFFER, 0, BUFFER.length, 0))
        } catch {
          closeEvents()
          return undefined
        }
        const line = /^populated (\d)$/m.exec(text)
        return line === null ? undefined : line[1] === '1'
      },
      watch(onChange) {
        try {
          const watcher = watch(events, { persistent: false }, () => onChange())
          // The cgroup removed under the watch ends it; that is no error of the kill's.
          watcher.on('error', () => watcher.close())
          return () => watcher.close()
        } catch {
          return undefined
        }
      },
      ran: () => Number(/^usage_usec (\d+)$/m.exec(readProc(join(path, 'cpu.stat')) ?? '')?.[1] ?? 0) > 0,
    } : {},
  }
}

/** Whether a child of this host can join `dir` (delegation rules go beyond file modes): one probe process, once. */
function canJoin(dir: string): boolean {
  const probe = spawnSync('/bin/sh', ['-c', 'echo $$ >"$1"', 'sh', join(dir, 'cgroup.procs')], { stdio: 'ignore', timeout: 5000 })
  return probe.status === 0
}

/** A directory of shell cgroups for this host (`name`), or undefined where the host may not create one. */
function openCgroupHost(name: string): CgroupHost | undefined {
  const own = ownCgroups()
  const candidates: Array<{ kind: CgroupKind, base: string | undefined, needs: string }> = [
    { kind: 'cgroup-v2', base: own.v2, needs: 'cgroup.kill' },
    { kind: 'cgroup-v1', base: own.freezer, needs: 'freezer.state' },
  ]
  for (const { kind, base, needs } of candidates) {
    if (base === undefined) continue
    const path = join(base, name)
    try {
      mkdirSync(path)
    } catch (error) {
      // Left by an earlier open in this process: its shell cgroups are this host's.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') continue
    }
    const probe = join(path, 'probe')
    let usable = false
    try {
      mkdirSync(probe)
      usable = existsSync(join(probe, needs)) && canJoin(probe)
    } catch {
      usable = false
    }
    for (let tries = 0; existsSync(probe) && tries < 100; tries++) {
      // The probe process is reaped, yet may linger in the cgroup a moment.
      try { rmdirSync(probe) } catch { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1) }
    }
    if (!usable) {
      try { rmdirSync(path) } catch { /* not ours to keep */ }
      continue
    }
    return {
      kind,
      path,
      create(shellId) {
        const dir = join(path, shellId)
        try {
          mkdirSync(dir)
        } catch {
          try {
            mkdirSync(path, { recursive: true })
            mkdirSync(dir)
          } catch {
            return undefined
          }
        }
        return shellCgroup(kind, dir)
      },
      killAll() {
        for (const shell of cgroupsUnder(kind, path)) shell.signal('SIGKILL')
      },
      remove() {
        for (const shell of cgroupsUnder(kind, path)) shell.remove()
        try { rmdirSync(path) } catch { /* members remain, or already gone */ }
      },
    }
  }
  return undefined
}

/** A dead host's shell cgroups, to kill its leftovers by membership. */
function cgroupsUnder(kind: CgroupKind, path: string): ShellCgroup[] {
  return readdirNames(path).map((child) => shellCgroup(kind, join(path, child)))
}

function readdirNames(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)
  } catch {
    return []
  }
}

let opened: { host: CgroupHost | undefined } | undefined
let made = 0

/**
 * A new cgroup for one command, in this process's host directory (opened on first use); undefined where none can
 * be had. `DSH_BG_TRACKING=marks` withholds it, so tests can prove the marks-only fallback on a machine with cgroups.
 */
export function newShellCgroup(): ShellCgroup | undefined {
  if (process.env.DSH_BG_TRACKING === 'marks') return undefined
  if (opened === undefined) {
    // Not the pid alone: a host in another PID namespace may have the same one.
    const name = `dsh-bg-${process.pid}-${randomBytes(4).toString('hex')}`
    opened = { host: openCgroupHost(name) }
    const host = opened.host
    if (host !== undefined) {
      // What hosts that died without cleanup left: rmdir drops only empty cgroups, and a shell cgroup is joined
      // within moments of its mkdir, so one empty for a minute is no live host's.
      const stale = Date.now() - 60_000
      for (const sibling of readdirNames(join(host.path, '..'))) {
        const path = join(host.path, '..', sibling)
        if (!sibling.startsWith('dsh-bg-') || path === host.path) continue
        for (const child of readdirNames(path)) {
          try { if (statSync(join(path, child)).mtimeMs < stale) rmdirSync(join(path, child)) } catch { /* members remain */ }
        }
        try { rmdirSync(path) } catch { /* not empty */ }
      }
      process.once('exit', () => host.remove())
    }
  }
  return opened.host?.create(`s${++made}`)
}

/** Host exit, without yielding: SIGKILL what any shell cgroup still holds, give the kernel up to `waitMs`, remove them. */
export function closeShellCgroups(waitMs: number): void {
  const host = opened?.host
  if (host === undefined) return
  host.killAll()
  const sleeper = new Int32Array(new SharedArrayBuffer(4))
  const deadline = Date.now() + waitMs
  const held = () => cgroupsUnder(host.kind, host.path).some((shell) => shell.pids().length > 0)
  while (held() && Date.now() < deadline) Atomics.wait(sleeper, 0, 0, 5)
  host.remove()
}

/** Plugin dispose: remove the empty shell cgroups (the directory is made again by the next command). */
export function pruneShellCgroups(): void {
  opened?.host?.remove()
}
