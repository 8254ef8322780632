/**
 * The local world's object and what it owns, beside the real-process specs that stay the judge: the cgroup path and
 * the crash-leftover reaper on a scripted kernel (a process table plus an in-memory cgroup tree), and a plugin
 * reloaded in one process keeping one exit hook and one host directory.
 */
import { EventEmitter } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bootHost, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { openCgroupHost } from '../src/local/cgroup.ts'
import { LocalHost } from '../src/local/host.ts'
import { ProcessCensus } from '../src/local/proc-census.ts'
import { ProcessGroup } from '../src/local/process-group.ts'
import type { KeptFile, LocalSyscalls } from '../src/local/syscalls.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import { Table } from './process-table.ts'

const ROOT = '/sys/fs/cgroup'
const OWN = `${ROOT}/user.slice/me`
const FREEZER = '/sys/fs/cgroup/freezer'

/** A process table and a cgroup tree the kernel keeps: members leave as they die; cgroup.kill kills them all. */
class Kernel extends Table implements LocalSyscalls {
  readonly dirsMade = new Map<string, Set<number>>()
  readonly files = new Map<string, string>()
  readonly mtimes = new Map<string, number>()
  readonly writes: [string, string][] = []
  joinable = true

  constructor(private readonly v2: boolean) {
    super()
    const base = v2 ? OWN : `${FREEZER}/me`
    this.files.set('/proc/self/mountinfo', v2
      ? `30 25 0:26 / ${ROOT} rw,nosuid - cgroup2 cgroup2 rw\n`
      : `31 25 0:27 / ${FREEZER} rw,nosuid - cgroup cgroup rw,freezer\n`)
    this.files.set('/proc/self/cgroup', v2 ? '0::/user.slice/me\n' : '7:freezer:/me\n')
    this.dirsMade.set(base, new Set())
  }

  private live(dir: string): number[] {
    return [...this.dirsMade.get(dir) ?? []].filter((pid) => this.procs.has(pid))
  }

  read(path: string): string | undefined {
    const dir = dirname(path)
    if (basename(path) === 'cgroup.procs' && this.dirsMade.has(dir)) return this.live(dir).map((pid) => `${pid}\n`).join('')
    if (basename(path) === 'cgroup.events' && this.dirsMade.has(dir)) {
      const below = [...this.dirsMade.keys()].filter((each) => each === dir || each.startsWith(`${dir}/`))
      return `populated ${below.some((each) => this.live(each).length > 0) ? 1 : 0}\nfrozen 0\n`
    }
    return this.files.get(path)
  }

  write(path: string, text: string): boolean {
    const dir = dirname(path)
    if (!this.dirsMade.has(dir)) return false
    this.writes.push([path, text])
    if (basename(path) === 'cgroup.procs') {
      if (!this.joinable || !this.procs.has(Number(text))) return false
      for (const members of this.dirsMade.values()) members.delete(Number(text))
      this.dirsMade.get(dir)?.add(Number(text))
    }
    if (basename(path) === 'cgroup.kill') {
      for (const each of [...this.dirsMade.keys()].filter((sub) => sub === dir || sub.startsWith(`${dir}/`))) {
        for (const pid of this.live(each)) this.signal(pid, 'SIGKILL')
      }
    }
    return true
  }

  mkdir(path: string): string | undefined {
    if (this.dirsMade.has(path)) return 'EEXIST'
    if (!this.dirsMade.has(dirname(path))) return 'ENOENT'
    this.dirsMade.set(path, new Set())
    return undefined
  }

  rmdir(path: string): string | undefined {
    if (!this.dirsMade.has(path)) return 'ENOENT'
    if (this.live(path).length > 0 || this.dirs(path).length > 0) return 'EBUSY'
    this.dirsMade.delete(path)
    return undefined
  }

  dirs(path: string): string[] {
    return [...this.dirsMade.keys()].filter((each) => dirname(each) === path).map((each) => basename(each))
  }

  /** A cgroup's own files exist with it: v2 `cgroup.kill`, v1 `freezer.state`. */
  mtime(path: string): number | undefined {
    if (this.dirsMade.has(path)) return this.mtimes.get(path) ?? Date.now()
    const own = this.v2 ? ['cgroup.kill', 'cgroup.procs', 'cgroup.events'] : ['freezer.state', 'cgroup.procs']
    return this.dirsMade.has(dirname(path)) && own.includes(basename(path)) ? Date.now() : undefined
  }

  keep(path: string): KeptFile {
    return { read: () => this.read(path), close: () => {} }
  }

  watch(): undefined {
    return undefined
  }

  childWrites(): boolean {
    return this.joinable
  }

  sleep(): void {}
}

class FakeLeader extends EventEmitter {
  constructor(readonly pid: number) {
    super()
  }
}

const MARKS = ['DSH_BG_SHELL=bg-test01', 'DSH_BG_HOST=host-test']

describe('the cgroup path on a scripted kernel', () => {
  it('v2: the host directory is made (its probe gone), a shell cgroup joins its command and cgroup.kill ends every member', () => {
    const kernel = new Kernel(true)
    const host = openCgroupHost(kernel)
    expect(host?.kind).toBe('cgroup-v2')
    expect(host?.path).toMatch(/^\/sys\/fs\/cgroup\/user\.slice\/me\/dsh-bg-\d+-[0-9a-f]{8}$/)
    expect(kernel.dirs(host?.path ?? '')).toEqual([])
    const cgroup = host?.create()
    expect(cgroup?.wrap(['bash', '-c', 'x'])).toEqual(['/bin/sh', '-c', expect.stringContaining('exec "$@"'), 'sh', `${cgroup?.path}/cgroup.procs`, 'bash', '-c', 'x'])
    kernel.add(500, { pgrp: 500, session: 500, start: 1000 }).add(700, { pgrp: 700, session: 700, start: 1100 })
    expect([cgroup?.adopt(500), cgroup?.adopt(700), cgroup?.adopt(999)]).toEqual([true, true, false])
    expect(cgroup?.pids()).toEqual([500, 700])
    expect(cgroup?.populated?.()).toBe(true)
    expect(cgroup?.signal('SIGKILL')).toBe(2)
    expect(kernel.writes).toContainEqual([`${cgroup?.path}/cgroup.kill`, '1'])
    expect(kernel.procs.size).toBe(0)
    expect(cgroup?.populated?.()).toBe(false)
    expect(cgroup?.remove()).toBe(true)
    host?.remove()
    expect(kernel.dirs(OWN)).toEqual([])
  })

  it('v1: SIGKILL freezes the cgroup, kills each member, thaws it; other signals go to each member unfrozen', () => {
    const kernel = new Kernel(false)
    const host = openCgroupHost(kernel)
    expect(host?.kind).toBe('cgroup-v1')
    const cgroup = host?.create()
    kernel.add(500, { pgrp: 500, session: 500, start: 1000 }).add(501, { pgrp: 500, session: 500, start: 1001 })
    cgroup?.adopt(500)
    cgroup?.adopt(501)
    kernel.fatal = new Set(['SIGKILL'])
    expect(cgroup?.signal('SIGTERM')).toBe(2)
    expect(kernel.writes.filter(([path]) => path.endsWith('freezer.state'))).toEqual([])
    expect(cgroup?.signal('SIGKILL')).toBe(2)
    expect(kernel.writes.filter(([path]) => path.endsWith('freezer.state')).map(([, text]) => text)).toEqual(['FROZEN', 'THAWED'])
    expect(kernel.sent).toEqual([[500, 'SIGTERM'], [501, 'SIGTERM'], [500, 'SIGKILL'], [501, 'SIGKILL']])
    expect(cgroup !== undefined && 'populated' in cgroup).toBe(false)
  })

  it('no cgroup host where a child may not join one, and nothing of the attempt is left', () => {
    const kernel = new Kernel(true)
    kernel.joinable = false
    expect(openCgroupHost(kernel)).toBeUndefined()
    expect(kernel.dirs(OWN)).toEqual([])
  })

  it('sweeps the empty shell cgroups dead hosts left a minute ago or more, keeps fresh ones and other directories', () => {
    const kernel = new Kernel(true)
    for (const dir of [`${OWN}/dsh-bg-1-aaaaaaaa`, `${OWN}/dsh-bg-1-aaaaaaaa/s1`, `${OWN}/dsh-bg-2-bbbbbbbb`, `${OWN}/dsh-bg-2-bbbbbbbb/s1`, `${OWN}/other`]) kernel.mkdir(dir)
    kernel.mtimes.set(`${OWN}/dsh-bg-1-aaaaaaaa/s1`, Date.now() - 120_000)
    const host = openCgroupHost(kernel)
    expect(kernel.dirs(OWN).sort()).toEqual(['dsh-bg-2-bbbbbbbb', basename(host?.path ?? ''), 'other'].sort())
    expect(kernel.dirs(`${OWN}/dsh-bg-2-bbbbbbbb`)).toEqual(['s1'])
  })

  it('a member\'s own cgroups below count as the shell\'s, and removal walks them', () => {
    const kernel = new Kernel(true)
    const cgroup = openCgroupHost(kernel)?.create()
    kernel.add(600, { pgrp: 600, session: 600, start: 1000 })
    kernel.mkdir(`${cgroup?.path}/runtime`)
    kernel.write(`${cgroup?.path}/runtime/cgroup.procs`, '600')
    expect(cgroup?.pids()).toEqual([600])
    expect(cgroup?.remove()).toBe(false)
    kernel.signal(600, 'SIGKILL')
    expect(cgroup?.remove()).toBe(true)
    expect(kernel.dirsMade.has(cgroup?.path ?? '')).toBe(false)
  })

  it('host exit: close SIGKILLs what any shell cgroup holds and removes the host directory', () => {
    const kernel = new Kernel(true)
    const host = openCgroupHost(kernel)
    const cgroup = host?.create()
    kernel.add(500, { pgrp: 500, session: 500, start: 1000 })
    cgroup?.adopt(500)
    host?.close(250)
    expect(kernel.procs.size).toBe(0)
    expect(kernel.dirs(OWN)).toEqual([])
  })

  it('a process group in a cgroup: tracking is cgroup, the census is its members, and SIGKILL is the cgroup\'s', async () => {
    const kernel = new Kernel(true)
    const cgroup = openCgroupHost(kernel)?.create()
    kernel.add(500, { pgrp: 500, session: 500, start: 1000, env: MARKS })
    // Left the group and cleared its environment: only the cgroup still knows it.
    kernel.add(700, { pgrp: 700, session: 700, start: 1100 })
    cgroup?.adopt(500)
    cgroup?.adopt(700)
    const leader = new FakeLeader(500)
    kernel.onDeath = (pid) => { if (pid === 500) setImmediate(() => leader.emit('exit', null, 'SIGKILL')) }
    const group = new ProcessGroup(leader, MARKS, new ProcessCensus(kernel), KILL_POLICY, cgroup)
    expect(group.census()).toEqual([500, 700])
    expect(group.tracking).toBe('cgroup')
    const outcome = await group.terminate({ signal: 'SIGKILL', force: true, timeoutMs: 1000 })
    expect(outcome).toMatchObject({ signal_sent: 'SIGKILL', survivors: [], tracking: 'cgroup' })
    expect(kernel.writes).toContainEqual([`${cgroup?.path}/cgroup.kill`, '1'])
    expect(kernel.procs.size).toBe(0)
  })
})

describe('the crash-leftover reaper on a scripted process table', () => {
  let tmp: string
  let saved: string | undefined
  beforeEach(() => {
    saved = process.env.TMPDIR
    tmp = mkdtempSync(join(tmpdir(), 'bg-reap-'))
    process.env.TMPDIR = tmp
  })
  afterEach(() => {
    if (saved === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = saved
    rmSync(tmp, { recursive: true, force: true })
  })

  const base = () => join(tmp, `dsh-bash-bg-${process.getuid?.()}`)
  function record(name: string, fields: { pid: number, start: number, pidns?: string }, pidns: string): void {
    writeFileSync(join(base(), `${name}.json`), JSON.stringify({ pidns, mark: `DSH_BG_HOST=${name}`, shells: [], ...fields }))
  }

  it('stops the marked processes of a host proven dead (its pid has another start time), once per shell, SIGKILL after the grace', async () => {
    const kernel = new Kernel(true)
    kernel.fatal = new Set(['SIGKILL'])
    const policy = { ...KILL_POLICY, leftoverGraceMs: 20 }
    const local = new LocalHost('bash_bg', policy, kernel)
    try {
      const pidns = local.dir.pidns
      // 4242 was the dead host (started at 100); it is someone else now. 4343 lives, with the start its record says.
      kernel.add(4242, { pgrp: 4242, session: 4242, start: 900 }).add(4343, { pgrp: 4343, session: 4343, start: 300 })
      record('host-dead', { pid: 4242, start: 100 }, pidns)
      record('host-live', { pid: 4343, start: 300 }, pidns)
      kernel.add(600, { pgrp: 600, session: 600, start: 200, env: ['DSH_BG_HOST=host-dead', 'DSH_BG_SHELL=bg-aaaaaa'] })
        .add(601, { pgrp: 600, session: 600, start: 201, env: ['DSH_BG_HOST=host-dead', 'DSH_BG_SHELL=bg-aaaaaa'] })
        .add(602, { pgrp: 602, session: 602, start: 202, env: ['DSH_BG_HOST=host-dead', 'DSH_BG_SHELL=bg-bbbbbb'] })
        .add(700, { pgrp: 700, session: 700, start: 400, env: ['DSH_BG_HOST=host-live', 'DSH_BG_SHELL=bg-cccccc'] })
        // Older than the dead host: a pid reused by a process that cannot be its shell's.
        .add(50, { pgrp: 50, session: 50, start: 10, env: ['DSH_BG_HOST=host-dead'] })
      const reaped = local.reap()
      expect(reaped.now).toBe(2)
      expect(kernel.sent).toEqual([[600, 'SIGTERM'], [601, 'SIGTERM'], [602, 'SIGTERM']])
      await expect(reaped.later).resolves.toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(kernel.sent.filter(([, signal]) => signal === 'SIGKILL').map(([pid]) => pid)).toEqual([600, 601, 602])
      expect([...kernel.procs.keys()].sort((a, b) => a - b)).toEqual([50, 700, 4242, 4343])
      const left = readdirSync(base())
      expect(left.filter((name) => name.startsWith('host-dead'))).toEqual([])
      expect(left).toContain('host-live.json')
    } finally {
      local.dispose()
    }
  })

  it('a host of another PID namespace without a socket is never judged; its processes and record stay', async () => {
    const kernel = new Kernel(true)
    const local = new LocalHost('bash_bg', KILL_POLICY, kernel)
    try {
      record('host-far', { pid: 4242, start: 100 }, 'pid:[1]')
      kernel.add(600, { pgrp: 600, session: 600, start: 200, env: ['DSH_BG_HOST=host-far', 'DSH_BG_SHELL=bg-aaaaaa'] })
      const reaped = local.reap()
      expect(reaped.now).toBe(0)
      await expect(reaped.later).resolves.toBe(0)
      expect(kernel.sent).toEqual([])
      expect(readdirSync(base())).toContain('host-far.json')
    } finally {
      local.dispose()
    }
  })

  it('the own record names this host, its start and its running shells; dispose removes directory, record and socket', () => {
    const kernel = new Kernel(true)
    kernel.add(process.pid, { pgrp: process.pid, session: process.pid, start: 777 })
    const local = new LocalHost('bash_bg', KILL_POLICY, kernel)
    local.dir.save(['bg-aaaaaa'])
    const name = basename(local.dir.logDir)
    expect(JSON.parse(readFileSync(`${local.dir.logDir}.json`, 'utf8'))).toEqual({
      pid: process.pid, start: 777, pidns: local.dir.pidns, mark: `DSH_BG_HOST=${name}`, shells: ['bg-aaaaaa'],
    })
    expect(local.marks('bg-aaaaaa')).toEqual({ DSH_BG_SHELL: 'bg-aaaaaa', DSH_BG_HOST: name })
    local.dispose()
    expect(readdirSync(base()).filter((entry) => entry.startsWith(name))).toEqual([])
  })
})

describe('a plugin reloaded in one process', () => {
  let host: Host | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  /** This process's host directories (by their records). */
  function ownHostDirs(): string[] {
    const dir = join(tmpdir(), `dsh-bash-bg-${process.getuid?.()}`)
    return readdirSync(dir).filter((name) => name.endsWith('.json')).flatMap((name) => {
      try {
        return (JSON.parse(readFileSync(join(dir, name), 'utf8')) as { pid: number }).pid === process.pid ? [name.slice(0, -'.json'.length)] : []
      } catch {
        return []
      }
    }).sort()
  }
  const hooks = () => ['exit', 'SIGTERM', 'SIGINT'].map((event) => process.listenerCount(event))

  it('keeps one exit hook (and one per signal) and one host directory; dispose leaves none', async () => {
    host = await bootHost()
    const before = { hooks: hooks(), dirs: ownHostDirs() }
    const first = host.ctx.plugin(BashBg, {})
    await first
    const firstDir = basename(host.ctx.backgroundShells.logDir)
    expect(hooks()).toEqual(before.hooks.map((count) => count + 1))
    expect(ownHostDirs()).toEqual([...before.dirs, firstDir].sort())
    await first.dispose()
    expect(hooks()).toEqual(before.hooks)
    const second = host.ctx.plugin(BashBg, {})
    await second
    const secondDir = basename(host.ctx.backgroundShells.logDir)
    expect(secondDir).not.toBe(firstDir)
    expect(hooks()).toEqual(before.hooks.map((count) => count + 1))
    expect(ownHostDirs()).toEqual([...before.dirs, secondDir].sort())
    await second.dispose()
    expect(hooks()).toEqual(before.hooks)
    expect(ownHostDirs()).toEqual(before.dirs)
  })
})
