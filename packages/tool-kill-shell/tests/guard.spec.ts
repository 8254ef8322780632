import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import type { ShellRecord } from '@gencode-ai/dsh-tool-bash-bg'
import { alive, bootKs, groupPids, marker, pidsWithArgv0, startBg, statOf, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
const innocents: ChildProcess[] = []
afterEach(async () => {
  for (const child of innocents.splice(0)) child.kill('SIGKILL')
  await host?.dispose()
  host = undefined
})

/** An unrelated process leading its own group, as a reused pid would be. */
function innocent(): ChildProcess {
  const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' })
  child.unref()
  innocents.push(child)
  return child
}

const NS_LAST_PID = '/proc/sys/kernel/ns_last_pid'
function canSteerPids(): boolean {
  try {
    accessSync(NS_LAST_PID, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** Make the kernel hand `pid` to a new unrelated group leader (root only: ns_last_pid). */
function innocentWithPid(pid: number): ChildProcess | undefined {
  for (let attempt = 0; attempt < 50; attempt++) {
    writeFileSync(NS_LAST_PID, String(pid - 1))
    const child = innocent()
    if (child.pid === pid) return child
    child.kill('SIGKILL')
  }
  return undefined
}

function startTicks(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.split(' ')[19]
  } catch {
    return undefined
  }
}

function forged(pid: number, startedAt: string, extra: Partial<ShellRecord> = {}): ShellRecord {
  return {
    id: `bg-f${Math.random().toString(36).slice(2, 7)}`, pid, command: 'sleep 60', cwd: '/', owner: '', started_at: startedAt,
    status: 'running', exit_code: null, signal: null, leader_exited_at: null, ended_at: null,
    output_file: '/dev/null', bytes: 0, capped: false, ...extra,
  }
}

describe('only registry shells, never the wrong process', () => {
  it.skipIf(!canSteerPids())('a reaped leader whose pid was reused is never signalled (real pid reuse)', async () => {
    host = await bootKs()
    const mark = marker('reuse')
    // The leader exits at once; its group lives on in one child for a second.
    const bg = await startBg(host, `(exec -a ${mark} sleep 1) & exit 0`)
    await until(() => host?.shells.get(bg.shell_id)?.leader_exited_at !== null, 'the leader to be reaped')
    // Orphans are reaped by init here, sometimes seconds later; until then their group id is pinned.
    await until(() => groupPids(bg.pid, true).length === 0 && statOf(bg.pid) === undefined, 'the group id to be free')
    // Another process on a busy machine may win the pid instead of ours: a reuse either way.
    innocentWithPid(bg.pid)
    const holder = startTicks(bg.pid)
    expect(holder, 'the kernel handed the pid to a new process').toBeDefined()
    const status = host.shells.get(bg.shell_id)?.status
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL' })
    if (status === 'running') {
      // The registry had not yet seen its group empty: the guard must catch the reuse.
      expect(result.isError).toBe(true)
      expect(textOf(result)).toBe(`Error: refusing to signal shell ${bg.shell_id}: pid ${bg.pid} now belongs to another process (the shell's leader was reaped and its pid reused); nothing was sent — the shell has exited`)
    } else {
      expect(result.value).toMatchObject({ outcome: 'already-exited', signal_sent: 'none' })
    }
    expect(alive(bg.pid)).toBe(true)
    expect(startTicks(bg.pid)).toBe(holder)
  })

  it('a wall-clock step forward does not make a live shell look reused (no clock comparison)', async () => {
    host = await bootKs()
    const mark = marker('clockstep')
    const bg = await startBg(host, `exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    // NTP (or a user) steps the clock 2 s forward after the shell started.
    const realNow = Date.now.bind(Date)
    const step = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 2000)
    try {
      const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
      expect(textOf(result)).toMatch(new RegExp(`^Stopped ${bg.shell_id}: sent SIGTERM;`))
      expect(result.value).toMatchObject({ success: true, outcome: 'terminated', survivors: [] })
    } finally {
      step.mockRestore()
    }
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(groupPids(bg.pid)).toEqual([])
  })

  it('a record whose leader was reaped while its pid is live again is refused (reaped-leader guard)', async () => {
    host = await bootKs()
    const other = innocent()
    const now = new Date().toISOString()
    const record = forged(other.pid as number, now, { leader_exited_at: now })
    host.shells.register(record)
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: record.id })
    expect(result.isError && result.error.info?.code).toBe('SHELL_PID_REUSED')
    expect(textOf(result)).toBe(`Error: refusing to signal shell ${record.id}: pid ${other.pid} now belongs to another process (the shell's leader was reaped and its pid reused); nothing was sent — the shell has exited`)
    expect(alive(other.pid as number)).toBe(true)
  })

  it('never the host process, its group, or its ancestors', async () => {
    host = await bootKs()
    const now = new Date().toISOString()
    for (const pid of [process.pid, process.ppid, statOf(process.pid)?.pgrp as number, 1]) {
      const record = forged(pid, now)
      host.shells.register(record)
      const result = await execTool(host.ctx, 'kill_shell', { shell_id: record.id, signal: 'SIGKILL' })
      expect(result.isError && result.error.info?.code).toBe('SHELL_PROTECTED_PID')
      expect(textOf(result)).toContain(`pid ${pid} is the host process, its process group, or one of its ancestors`)
    }
    expect(alive(process.ppid)).toBe(true)
  })
})
