/** A cgroup per shell where the host may create one: membership a process cannot leave by setsid, a scrubbed environment or a new title. */
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { LocalSyscalls } from './syscalls.ts'

/** How a shell's processes are tracked: a cgroup v2 (killed atomically), a v1 freezer cgroup (frozen, then killed), or none. */
export type CgroupKind = 'cgroup-v2' | 'cgroup-v1'

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
  /** Whether a live process is in it or below (v2 `cgroup.events`: a member leaves as it exits); undefined on v1. */
  populated?(): boolean | undefined
  /** Call `onChange` whenever `populated` flips (inotify on `cgroup.events`); the disposer, or undefined where it cannot watch. */
  watch?(onChange: () => void): (() => void) | undefined
  /** Whether a process ever ran in it (v2 `cpu.stat` usage): its join happened, though every member may have exited since. */
  ran?(): boolean
}

/** This host's directory of shell cgroups. */
export interface CgroupHost {
  readonly kind: CgroupKind
  readonly path: string
  /** A new shell cgroup (the host directory re-made if it was removed); undefined when mkdir fails. */
  create(): ShellCgroup | undefined
  /** Host exit, without yielding: SIGKILL what any shell cgroup still holds, give the kernel up to `waitMs`, remove them. */
  close(waitMs: number): void
  /** Remove the empty shell cgroups, and the host's directory once nothing is left in it. */
  remove(): void
}

/** Joins the cgroup named by $1 (its cgroup.procs), then runs the rest; a failed join still runs the command (tracked by marks). */
const JOIN = 'echo $$ >"$1" 2>/dev/null; shift; exec "$@"'
/** A shell cgroup is joined within moments of its mkdir: one empty this long is no live host's. */
const STALE_MS = 60_000

const removed = (code: string | undefined) => code === undefined || code === 'ENOENT'
const lines = (text: string | undefined) => (text ?? '').split('\n').filter((line) => line !== '')

/** Where this process sits in the v2 hierarchy and in the v1 freezer hierarchy, from /proc/self. */
function ownCgroups(sys: LocalSyscalls): { v2?: string, freezer?: string } {
  const mounts = lines(sys.read('/proc/self/mountinfo')).map((line) => {
    const [left = '', right = ''] = line.split(' - ')
    const fields = left.split(' ')
    const [fstype = '', , options = ''] = right.split(' ')
    return { root: fields[3] ?? '', point: fields[4] ?? '', fstype, options: options.split(',') }
  })
  const found: { v2?: string, freezer?: string } = {}
  for (const line of lines(sys.read('/proc/self/cgroup'))) {
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

/** The shell cgroup at `path` (the keeper's view of one its host made). */
export function shellCgroup(sys: LocalSyscalls, kind: CgroupKind, path: string): ShellCgroup {
  const procs = join(path, 'cgroup.procs')
  // Kept open from the first look until removal.
  const events = kind === 'cgroup-v2' ? sys.keep(join(path, 'cgroup.events')) : undefined
  // A member may make cgroups of its own below (a container runtime): they are still this shell's.
  const pids = (): number[] => [
    ...lines(sys.read(procs)).map(Number).filter((pid) => pid > 0),
    ...sys.dirs(path).flatMap((child) => shellCgroup(sys, kind, join(path, child)).pids()),
  ]
  const signalEach = (members: readonly number[], signal: NodeJS.Signals) => members.filter((pid) => sys.signal(pid, signal)).length
  return {
    kind,
    path,
    wrap: (argv) => ['/bin/sh', '-c', JOIN, 'sh', procs, ...argv],
    adopt: (pid) => sys.write(procs, String(pid)),
    pids,
    signal(signal) {
      const members = pids()
      if (signal !== 'SIGKILL' || members.length === 0) return signalEach(members, signal)
      if (kind === 'cgroup-v2' && sys.write(join(path, 'cgroup.kill'), '1')) return members.length
      // v1: a frozen cgroup cannot fork while its members are killed.
      const frozen = kind === 'cgroup-v1' && sys.write(join(path, 'freezer.state'), 'FROZEN')
      const sent = signalEach(pids(), 'SIGKILL')
      if (frozen) sys.write(join(path, 'freezer.state'), 'THAWED')
      return sent
    },
    remove() {
      events?.close()
      // One rmdir in the common case; only a cgroup with cgroups of its own below (EBUSY) needs a walk first.
      const code = sys.rmdir(path)
      if (removed(code)) return true
      if (code !== 'EBUSY' && code !== 'ENOTEMPTY') return false
      const children = sys.dirs(path)
      if (children.length === 0) return false
      for (const child of children) shellCgroup(sys, kind, join(path, child)).remove()
      return removed(sys.rmdir(path))
    },
    ...events === undefined ? {} : {
      populated() {
        const line = /^populated (\d)$/m.exec(events.read() ?? '')
        return line === null ? undefined : line[1] === '1'
      },
      watch: (onChange: () => void) => sys.watch(join(path, 'cgroup.events'), onChange),
      ran: () => Number(/^usage_usec (\d+)$/m.exec(sys.read(join(path, 'cpu.stat')) ?? '')?.[1] ?? 0) > 0,
    },
  }
}

/** What hosts that died without cleanup left beside `path`: rmdir drops only empty cgroups. */
function sweepStale(sys: LocalSyscalls, path: string): void {
  const parent = join(path, '..')
  const stale = Date.now() - STALE_MS
  for (const sibling of sys.dirs(parent)) {
    const dir = join(parent, sibling)
    if (!sibling.startsWith('dsh-bg-') || dir === path) continue
    for (const child of sys.dirs(dir)) if ((sys.mtime(join(dir, child)) ?? Infinity) < stale) sys.rmdir(join(dir, child))
    sys.rmdir(dir)
  }
}

/** This host's directory of shell cgroups (pid and a random part: another PID namespace may reuse the pid), or undefined. */
export function openCgroupHost(sys: LocalSyscalls): CgroupHost | undefined {
  const own = ownCgroups(sys)
  const name = `dsh-bg-${process.pid}-${randomBytes(4).toString('hex')}`
  const candidates: Array<{ kind: CgroupKind, base: string | undefined, needs: string }> = [
    { kind: 'cgroup-v2', base: own.v2, needs: 'cgroup.kill' },
    { kind: 'cgroup-v1', base: own.freezer, needs: 'freezer.state' },
  ]
  for (const { kind, base, needs } of candidates) {
    if (base === undefined) continue
    const path = join(base, name)
    if (sys.mkdir(path) !== undefined) continue
    const probe = join(path, 'probe')
    const usable = sys.mkdir(probe) === undefined && sys.mtime(join(probe, needs)) !== undefined && sys.childWrites(join(probe, 'cgroup.procs'))
    // The probe process is reaped, yet may linger in the cgroup a moment.
    for (let tries = 0; sys.rmdir(probe) === 'EBUSY' && tries < 100; tries++) sys.sleep(1)
    if (!usable) {
      sys.rmdir(path)
      continue
    }
    sweepStale(sys, path)
    let made = 0
    const all = () => sys.dirs(path).map((child) => shellCgroup(sys, kind, join(path, child)))
    const remove = () => {
      for (const shell of all()) shell.remove()
      sys.rmdir(path)
    }
    return {
      kind,
      path,
      create() {
        const dir = join(path, `s${++made}`)
        if (sys.mkdir(dir) === undefined) return shellCgroup(sys, kind, dir)
        // The host directory was removed (a dispose pruned it): made again.
        sys.mkdir(path)
        return sys.mkdir(dir) === undefined ? shellCgroup(sys, kind, dir) : undefined
      },
      close(waitMs) {
        for (const shell of all()) shell.signal('SIGKILL')
        const deadline = Date.now() + waitMs
        while (all().some((shell) => shell.pids().length > 0) && Date.now() < deadline) sys.sleep(5)
        remove()
      },
      remove,
    }
  }
  return undefined
}
