import { spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
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

describe('only registry shells, never the wrong process', () => {
  // The window in which a record still says running after its leader was reaped (a reused pid, the host's own
  // pids) is the process group's to guard: tool-bash-bg/tests/process-group-logic.spec.ts drives it with a
  // scripted process table. Here, end to end, with the kernel really handing the pid to someone else.
  it.skipIf(!canSteerPids())('a reaped leader whose pid was reused is already exited: a value, nothing signalled (real pid reuse)', async () => {
    host = await bootKs()
    const bg = await startBg(host, 'exit 0')
    await host.shells.settled(bg.shell_id)
    // Orphans are reaped by init here, sometimes seconds later; until then their group id is pinned. Another process on a
    // busy machine (a parallel test's) may win the pid instead of ours and then exit: wait for the pid again and retry, so
    // the holder checked below is ours whenever the kernel allows it.
    let holderChild: ChildProcess | undefined
    for (let round = 0; round < 10; round++) {
      await until(() => groupPids(bg.pid, true).length === 0 && statOf(bg.pid) === undefined, 'the pid to be free')
      holderChild = innocentWithPid(bg.pid)
      if (holderChild !== undefined) break
      await new Promise((resolve) => setTimeout(resolve, 300))
      if (statOf(bg.pid) !== undefined) break // a foreign process that lives on holds it: a reuse either way
    }
    const holder = startTicks(bg.pid)
    expect(holder, 'the kernel handed the pid to a new process').toBeDefined()
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL' })
    expect(result.value).toMatchObject({ success: true, outcome: 'already-exited', signal_sent: 'none', exit_code: 0, note: 'Shell already completed', survivors: [] })
    expect(textOf(result)).toBe(`Shell already completed: ${bg.shell_id} (exit code 0). No signal sent.`)
    expect(startTicks(bg.pid)).toBe(holder)
    if (holderChild !== undefined) expect(holderChild.signalCode).toBeNull()
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
})
