import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import type { ShellRecord } from '@gencode-ai/dsh-tool-bash-bg'
import { bootKs, groupPids, marker, pidsWithArgv0, startBg, statOf, until, type KsHost } from './harness.ts'

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
    output_file: '/dev/null', bytes: 0, capped: false, last_output_at: null, processes: 1, ...extra,
  }
}

/**
 * Make the registry's lookup return `record` as it was just before the registry saw the group
 * empty (running, the leader reaped); everything else stays the real registry.
 */
function staleView(on: KsHost, record: ShellRecord): void {
  const stale: ShellRecord = { ...record, status: 'running', ended_at: null }
  const find = on.shells.find.bind(on.shells)
  on.shells.find = (id) => id === record.id ? stale : find(id)
}

describe('only registry shells, never the wrong process', () => {
  it.skipIf(!canSteerPids())('a reaped leader whose pid was reused is already exited: a value, nothing signalled (real pid reuse)', async () => {
    host = await bootKs()
    const bg = await startBg(host, 'exit 0')
    const settled = await host.shells.settled(bg.shell_id)
    // Orphans are reaped by init here, sometimes seconds later; until then their group id is pinned.
    await until(() => groupPids(bg.pid, true).length === 0 && statOf(bg.pid) === undefined, 'the pid to be free')
    // Another process on a busy machine may win the pid instead of ours: a reuse either way.
    innocentWithPid(bg.pid)
    const holder = startTicks(bg.pid)
    expect(holder, 'the kernel handed the pid to a new process').toBeDefined()
    // The one injected fault: the view before the registry saw the group empty (the window the guard covers).
    staleView(host, settled)
    const terminate = vi.spyOn(host.shells, 'terminate')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL' })
    expect(result.value).toMatchObject({ success: true, outcome: 'already-exited', signal_sent: 'none', exit_code: 0, note: 'Shell already completed', survivors: [] })
    expect(textOf(result)).toBe(`Shell already completed: ${bg.shell_id} (exit code 0). No signal sent.`)
    // The registry knows the group emptied: it sends nothing to the pid's new holder.
    await expect(terminate.mock.results[0]?.value).resolves.toMatchObject({ signal_sent: 'none', survivors: [] })
    expect(startTicks(bg.pid)).toBe(holder)
  })

  it('a pid held by a newer process after the leader was reaped is already exited, not an error', async () => {
    host = await bootKs()
    const bg = await startBg(host, 'exit 3')
    const settled = await host.shells.settled(bg.shell_id)
    // What the registry could still show in the window: running, leader reaped, and its pid now a live unrelated process.
    const other = innocent()
    staleView(host, { ...settled, pid: other.pid as number })
    const terminate = vi.spyOn(host.shells, 'terminate')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.isError).toBe(false)
    expect(result.value).toMatchObject({ success: true, outcome: 'already-exited', signal_sent: 'none', exit_code: 3, note: 'Shell already completed' })
    await expect(terminate.mock.results[0]?.value).resolves.toMatchObject({ signal_sent: 'none' })
    expect(other.exitCode).toBeNull()
    expect(other.signalCode).toBeNull()
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

  it('never the host process, its group, or its ancestors: the registry refuses before any signal', async () => {
    host = await bootKs()
    // A corrupt record (registered without a process): only the guard stands between it and a signal request.
    const terminate = vi.spyOn(host.shells, 'terminate')
    const now = new Date().toISOString()
    for (const pid of [process.pid, process.ppid, statOf(process.pid)?.pgrp as number, 1]) {
      const record = forged(pid, now)
      host.shells.register(record)
      const result = await execTool(host.ctx, 'kill_shell', { shell_id: record.id, signal: 'SIGKILL' })
      expect(result.isError && result.error.info?.code).toBe('SHELL_PROTECTED_PID')
      expect(textOf(result)).toBe(`Error: refusing to signal shell ${record.id}: pid ${pid} is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`)
    }
    expect(terminate).toHaveBeenCalledTimes(4)
  })
})
