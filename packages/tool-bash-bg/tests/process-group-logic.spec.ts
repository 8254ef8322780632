// The process group's pid-reuse, mark and guard logic on a scripted process table (ProcessSyscalls), beside the
// real-process tests in process-group.spec.ts, which stay the judge.
import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import { ProcessCensus, type ScanTarget } from '../src/local/proc-census.ts'
import { ProcessGroup } from '../src/local/process-group.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import { Table } from './process-table.ts'

class FakeLeader extends EventEmitter {
  constructor(readonly pid: number) {
    super()
  }

  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    this.emit('exit', code, signal)
  }
}

const MARK = 'DSH_BG_SHELL=bg-test01'
const HOST = 'DSH_BG_HOST=host-test'
const MARKS = [MARK, HOST]

/** Leader 500 (started at tick 1000) with a child 501 in its group. */
function shell(marks: readonly string[] = MARKS): { table: Table, leader: FakeLeader, group: ProcessGroup } {
  const table = new Table()
    .add(500, { pgrp: 500, session: 400, start: 1000, env: [...marks] })
    .add(501, { pgrp: 500, session: 400, start: 1001, env: [...marks] })
  const leader = new FakeLeader(500)
  // The kernel reports the leader's death to its parent (Node's 'exit' event), asynchronously.
  table.onDeath = (pid) => { if (pid === 500) setImmediate(() => leader.exit(null, 'SIGTERM')) }
  return { table, leader, group: new ProcessGroup(leader, marks, new ProcessCensus(table), KILL_POLICY) }
}

describe('ProcessGroup on a scripted process table', () => {
  it('records the leader start time and starts in phase leader-alive with both processes members', () => {
    const { group } = shell()
    expect(group.leaderStart).toBe(1000)
    expect(group.phase).toEqual({ name: 'leader-alive' })
    expect(group.members()).toEqual([500, 501])
  })

  it('a new group leader that took the reaped leader\'s pid is never a member and never signalled', async () => {
    const { table, leader, group } = shell([])
    table.procs.clear()
    leader.exit(0)
    await group.exited
    expect(group.phase.name).toBe('leader-exited')
    // The kernel handed pid 500 to an unrelated process leading its own group 500.
    table.add(500, { pgrp: 500, session: 500, start: 5000 })
    expect(group.members()).toEqual([])
    expect(group.phase.name).toBe('empty')
    expect(group.signal('SIGKILL')).toBe(false)
    expect(table.sent).toEqual([])
  })

  it('a newer process holding the leader\'s pid (in another group) makes the census ignore the group id', async () => {
    const { table, leader, group } = shell()
    table.procs.delete(500)
    leader.exit(0)
    await group.exited
    table.add(500, { pgrp: 777, session: 777, start: 6000 })
    // 501 is still in group 500, but the group id now names a process that is not ours: only marks count.
    table.procs.set(501, { pgrp: 500, session: 400, start: 1001, env: [] })
    expect(group.census()).toEqual([])
    expect(group.phase.name).toBe('empty')
  })

  it('finds a marked process that left the group (setsid), only when younger than the leader', () => {
    const { table, group } = shell()
    table.add(600, { pgrp: 600, session: 600, start: 1200, env: ['PATH=/bin', MARK, HOST] })
    // Carries the marks but started before the leader: a pid's earlier owner, never ours.
    table.add(300, { pgrp: 300, session: 300, start: 900, env: [MARK, HOST] })
    // Carries one mark of two (another host's shell of the same id): not ours either.
    table.add(601, { pgrp: 601, session: 601, start: 1300, env: [MARK, 'DSH_BG_HOST=other'] })
    expect(group.census()).toEqual([500, 501, 600])
  })

  it('a marked process seen once stays a member after its environment is overwritten (a new title), as long as the same process lives', () => {
    const { table, group } = shell()
    table.add(600, { pgrp: 600, session: 600, start: 1200, env: [MARK, HOST] })
    expect(group.census()).toEqual([500, 501, 600])
    table.procs.set(600, { pgrp: 600, session: 600, start: 1200, env: ['xxxx'] })
    expect(group.census()).toEqual([500, 501, 600])
    // The pid now names another process (a later start): no longer ours, and forgotten.
    table.procs.set(600, { pgrp: 600, session: 600, start: 1500, env: [] })
    expect(group.census()).toEqual([500, 501])
    table.procs.set(600, { pgrp: 600, session: 600, start: 1200, env: [] })
    expect(group.census()).toEqual([500, 501])
  })

  it('with a cgroup the leader joined, its members are the census, marks or not, and SIGKILL goes through it', () => {
    const table = new Table()
      .add(500, { pgrp: 500, session: 400, start: 1000, env: [] })
      .add(700, { pgrp: 700, session: 700, start: 1100, env: [] })
      .add(800, { pgrp: 800, session: 800, start: 1100, env: [MARK, HOST] })
    const members = [500, 700]
    const killed: string[] = []
    const cgroup = {
      kind: 'cgroup-v2' as const, path: '/cg/s1', wrap: (argv: [string, ...string[]]) => argv,
      adopt: () => false, remove: () => true, pids: () => members.filter((pid) => table.procs.has(pid)),
      signal: (signal: NodeJS.Signals) => {
        killed.push(signal)
        for (const pid of members) table.procs.delete(pid)
        return members.length
      },
    }
    const group = new ProcessGroup(new FakeLeader(500), MARKS, new ProcessCensus(table), KILL_POLICY, cgroup)
    // 700 cleared its environment and left the group; 800 carries the marks but is not in the cgroup (not ours).
    expect(group.census()).toEqual([500, 700])
    expect(group.tracking).toBe('cgroup')
    expect(group.signal('SIGKILL')).toBe(true)
    expect(killed).toEqual(['SIGKILL'])
  })

  it('an empty cgroup while its group lives counts the group (a process root moved out); a reused group id never', async () => {
    const table = new Table()
      .add(500, { pgrp: 500, session: 400, start: 1000, env: [] })
      .add(600, { pgrp: 500, session: 400, start: 1001, env: [] })
    const leader = new FakeLeader(500)
    const cgroup = {
      kind: 'cgroup-v2' as const, path: '/cg/s2', wrap: (argv: [string, ...string[]]) => argv,
      adopt: () => false, remove: () => true, pids: () => [500].filter((pid) => table.procs.has(pid)), signal: () => 0,
    }
    const group = new ProcessGroup(leader, MARKS, new ProcessCensus(table), KILL_POLICY, cgroup)
    expect(group.census()).toEqual([500])
    // 600 (env -i) moved itself out of the cgroup; the leader exits: the cgroup is empty, the group is not.
    table.procs.delete(500)
    leader.exit(0)
    await group.exited
    expect(group.census()).toEqual([600])
    expect(group.signal('SIGKILL')).toBe(true)
    expect(table.sent).toContainEqual([-500, 'SIGKILL'])
    // Had pid 500 gone to a new group's leader, that group is not ours: nothing counted or signalled.
    table.procs.delete(600)
    table.add(500, { pgrp: 500, session: 500, start: 5000, env: [] }).add(501, { pgrp: 500, session: 500, start: 5001, env: [] })
    table.sent.length = 0
    expect(group.census()).toEqual([])
    expect(table.sent).toEqual([])
  })

  it('never counts or signals the host or its ancestors, even carrying the marks', () => {
    const { table, group } = shell()
    table.add(process.ppid, { pgrp: process.ppid, session: process.ppid, start: 2000, env: [MARK, HOST] })
    expect(group.census()).toEqual([500, 501])
  })

  it('zombies are not members: a group of zombies is empty once its leader exited', async () => {
    const { table, leader, group } = shell()
    table.procs.delete(500)
    table.procs.set(501, { pgrp: 500, session: 400, start: 1001, state: 'Z', env: MARKS })
    leader.exit(0)
    await group.exited
    expect(group.census()).toEqual([])
    expect(group.phase.name).toBe('empty')
  })

  it('terminate signals the group, then the marked escapee at the next scan, and reports nothing left', async () => {
    const { table, group } = shell()
    table.add(600, { pgrp: 600, session: 600, start: 1200, env: MARKS })
    const outcome = await group.terminate({ signal: 'SIGTERM', force: true, timeoutMs: 1000 })
    expect(outcome).toMatchObject({ signal_sent: 'SIGTERM', force_killed: false, survivors: [], exit_code: null, timeout_ms: 1000 })
    expect(table.sent).toEqual([[-500, 'SIGTERM'], [600, 'SIGTERM']])
    expect(group.phase.name).toBe('empty')
    expect(group.live).toBe(0)
  })

  it('escalates to SIGKILL for a group that ignores the first signal, once per marked process', async () => {
    const { table, group } = shell()
    table.add(600, { pgrp: 600, session: 600, start: 1200, env: MARKS })
    table.fatal = new Set(['SIGKILL'])
    const outcome = await group.terminate({ signal: 'SIGINT', force: true, timeoutMs: 30 })
    expect(outcome).toMatchObject({ signal_sent: 'SIGINT', force_killed: true, survivors: [] })
    expect(table.sent.filter(([pid]) => pid === 600)).toEqual([[600, 'SIGINT'], [600, 'SIGKILL']])
    expect(table.sent.filter(([pid]) => pid === -500)).toEqual([[-500, 'SIGINT'], [-500, 'SIGKILL']])
  })

  it('force false reports the survivors from a fresh census', async () => {
    const { table, group } = shell()
    table.fatal = new Set()
    const outcome = await group.terminate({ signal: 'SIGTERM', force: false, timeoutMs: 20 })
    expect(outcome).toMatchObject({ signal_sent: 'SIGTERM', force_killed: false, survivors: [500, 501] })
    expect(table.sent).toEqual([[-500, 'SIGTERM']])
  })

  it.each([
    ['the host process', process.pid],
    ['the host\'s parent', process.ppid],
    ['pid 1', 1],
  ])('refuses to signal %s: SHELL_PROTECTED_PID before any signal', async (_label, pid) => {
    const table = new Table().add(pid, { pgrp: pid, session: pid, start: 1000 })
    const group = new ProcessGroup(new FakeLeader(pid), MARKS, new ProcessCensus(table), KILL_POLICY)
    await expect(group.terminate({ signal: 'SIGKILL', force: true, timeoutMs: 10 })).rejects.toMatchObject({
      code: 'SHELL_PROTECTED_PID',
      message: `refusing to signal pid ${pid}: it is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`,
    })
    expect(group.signalNow('SIGKILL')).toBe(false)
    expect(table.sent).toEqual([])
  })

  it('without /proc (not Linux) the group id is the only probe', () => {
    const table = new Table().add(500, { pgrp: 500, session: 400, start: 0 })
    const noProc = Object.assign(Object.create(table) as Table, { pids: () => undefined, stat: () => undefined })
    const group = new ProcessGroup(new FakeLeader(500), [], new ProcessCensus(noProc), KILL_POLICY)
    expect(group.members()).toEqual([500])
  })
})

describe('the census cache (what it may skip, and when it must look again)', () => {
  /** One census per process table, as a host keeps one per kernel. */
  const censuses = new WeakMap<Table, ProcessCensus>()
  const scanShells = (targets: readonly ScanTarget[], t: Table) => {
    const census = censuses.get(t) ?? new ProcessCensus(t)
    censuses.set(t, census)
    return census.scan(targets)
  }
  const target = { pgid: 500, leaderStart: 1000, group: true, marks: MARKS }
  /** A table with the leader, one old daemon (pid 100) and one young stranger (pid 700, no marks). */
  function table(): Table {
    const t = new Table()
      .add(500, { pgrp: 500, session: 500, start: 1000, env: MARKS })
      .add(100, { pgrp: 100, session: 100, start: 10 })
      .add(700, { pgrp: 700, session: 700, start: 1500, env: ['PATH=/bin'] })
    t.alloc = { lastPid: 800, forks: 5000, pidMax: 32768 }
    return t
  }

  it('reads a process that cannot be ours once, then only the members', async () => {
    const t = table()
    const environ = t.environ.bind(t)
    let environs = 0
    t.environ = (pid) => { environs++; return environ(pid) }
    expect(scanShells([target], t)).toEqual([{ group: [500], marked: [] }])
    expect([t.stats, environs]).toEqual([3, 1])
    t.stats = 0
    expect(scanShells([target], t)).toEqual([{ group: [500], marked: [] }])
    // Only the leader (a member) is read again.
    expect([t.stats, environs]).toEqual([1, 1])
  })

  it('a pid the allocator handed out again since (inside the arc) is read again: a new marked process is found', async () => {
    const t = table()
    scanShells([target], t)
    // 700 exited; the allocator wrapped past it and gave 700 to a marked child of the shell.
    t.add(700, { pgrp: 900, session: 900, start: 2000, env: MARKS })
    t.alloc = { lastPid: 750, forks: 5100, pidMax: 32768 }
    expect(scanShells([target], t)).toEqual([{ group: [500], marked: [700] }])
  })

  it('with nearly a lap of forks since, every cached pid is read again', async () => {
    const t = table()
    scanShells([target], t)
    t.add(100, { pgrp: 900, session: 900, start: 3000, env: MARKS })
    // The last pid did not move, but 20000 forks went by: a lap may have happened.
    t.alloc = { lastPid: 800, forks: 25000, pidMax: 32768 }
    expect(scanShells([target], t)).toEqual([{ group: [500], marked: [100] }])
  })

  it('without the allocator\'s state nothing is skipped', async () => {
    const t = table()
    t.alloc = undefined
    scanShells([target], t)
    t.stats = 0
    scanShells([target], t)
    expect(t.stats).toBe(3)
  })
})
