// A kill whose keeper (the shell's parent, which reaps its leader and tells this host) is late: paused with SIGSTOP
// through the kill. The host reads the leader's end from its zombie; the keeper's own word, once it runs again, agrees.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { JobId } from '@deepseek-ai/dsh-jobs'
import { execTool, textOf } from '@gencode-ai/testkit'
import { exitFileOf, Ledger } from '../../tool-bash-bg/src/local/ledger.ts'
import { bootKs, groupPids, marker, normalized, pidsWithArgv0, startBg, statOf, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
/** A keeper this file paused: let go after each test, also when the test failed while it was paused. */
let paused: number | undefined
afterEach(async () => {
  if (paused !== undefined) process.kill(paused, 'SIGCONT')
  paused = undefined
  await host?.dispose()
  host = undefined
})

// The ledger (where the keeper writes a shell's exit file) of this file's own.
const home = mkdtempSync(join(tmpdir(), 'ks-late-keeper-'))
const saved = process.env.DSH_HOME
beforeAll(() => { process.env.DSH_HOME = home })
afterAll(() => {
  if (saved === undefined) delete process.env.DSH_HOME
  else process.env.DSH_HOME = saved
  rmSync(home, { recursive: true, force: true })
})

/** Pause the shell's parent, its keeper (checked by its command line); its pid. */
function pauseKeeperOf(pid: number): number {
  const parent = statOf(pid)?.ppid ?? 0
  expect(parent).toBeGreaterThan(1)
  expect(readFileSync(`/proc/${parent}/cmdline`, 'utf8')).toMatch(/keeper(-[0-9a-f]+)?\.(ts|js|mjs)\b/)
  process.kill(parent, 'SIGSTOP')
  paused = parent
  return parent
}

describe('kill_shell with a late keeper', () => {
  it('a keeper paused through the kill: nothing left running, the true exit code from the zombie, and the keeper agrees once resumed', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('late')
    // Exits 7 on SIGTERM: its code, not a signal, is what the kill must report.
    const bg = await startBg(host, `trap 'exit 7' TERM; (exec -a ${mark} sleep 60) & wait`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const keeper = pauseKeeperOf(bg.pid)
    let result
    let leader
    try {
      result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id }, { agent })
      // Looked at before the keeper runs again: it has not reaped the leader, so the host read its end itself.
      leader = statOf(bg.pid)?.state
    } finally {
      process.kill(keeper, 'SIGCONT')
    }
    expect(leader).toBe('Z')
    expect(result.value).toMatchObject({
      success: true, shell_id: bg.shell_id, outcome: 'terminated', signal_sent: 'SIGTERM', force_killed: false, exit_code: 7, survivors: [],
    })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM; all processes exited after N ms (exit code 7). No SIGKILL needed.`)
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(groupPids(bg.pid)).toEqual([])
    expect(await host.shells.settled(bg.shell_id)).toMatchObject({ status: 'killed', exit_code: 7, signal: null })
    expect(await host.ctx.jobs.wait(JobId(bg.job_id ?? ''), 10_000, agent)).toMatchObject({ status: 'killed' })
    // The keeper, running again, reaps the leader and records the same end in its exit file.
    const exitFile = exitFileOf(new Ledger(join(home, 'bash-bg', 'ledger')).dirOf(agent.id), bg.shell_id)
    await until(() => statOf(bg.pid) === undefined && existsSync(exitFile), 'the keeper to reap the leader and write its exit file')
    expect(JSON.parse(readFileSync(exitFile, 'utf8'))).toMatchObject({ shellId: bg.shell_id, code: 7, signal: null })
  })

  it('tracked by marks (no cgroup to wake the wait), a leader killed by the signal, keeper paused: the signal, and the same from the keeper', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('latesig')
    process.env.DSH_BG_TRACKING = 'marks'
    let bg
    try {
      bg = await startBg(host, `(exec -a ${mark} sleep 60) & wait`, agent)
    } finally {
      delete process.env.DSH_BG_TRACKING
    }
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const keeper = pauseKeeperOf(bg.pid)
    let result
    try {
      result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id }, { agent })
    } finally {
      process.kill(keeper, 'SIGCONT')
    }
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', force_killed: false, exit_code: null, survivors: [], tracking: 'marks' })
    expect(groupPids(bg.pid)).toEqual([])
    expect(await host.shells.settled(bg.shell_id)).toMatchObject({ status: 'killed', exit_code: null, signal: 'SIGTERM' })
    const exitFile = exitFileOf(new Ledger(join(home, 'bash-bg', 'ledger')).dirOf(agent.id), bg.shell_id)
    await until(() => existsSync(exitFile), 'the keeper to write its exit file')
    expect(JSON.parse(readFileSync(exitFile, 'utf8'))).toMatchObject({ code: null, signal: 'SIGTERM' })
  })
})
