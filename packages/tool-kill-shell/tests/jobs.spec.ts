import { afterEach, describe, expect, it, vi } from 'vitest'
import { JobId, type JobRegistry, type JobSnapshot } from '@deepseek-ai/dsh-jobs'
import { execTool, textOf } from '@gencode-ai/testkit'
import { alive, bootKs, groupPids, marker, normalized, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

const IGNORE_TERM = "trap '' TERM"

/**
 * The terminal snapshots the host hands its completion reporters. dsh-tool-jobs' reporter
 * delivers a notice (a model turn on an idle owner) only for one that is not `reported`.
 */
function settlements(on: KsHost): JobSnapshot[] {
  const seen: JobSnapshot[] = []
  on.ctx.jobs.onJobDone((snapshot) => { seen.push(snapshot) })
  return seen
}

describe('host jobs (real dsh-tool-jobs)', () => {
  it('kills through ctx.jobs.kill: the host records the kill and raises no completion notice', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('job')
    const bg = await startBg(host, `exec -a ${mark} sleep 60`, agent)
    expect(bg.job_id).toMatch(/^bash_bg-\d+$/)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const settled = settlements(host)
    // The job id is accepted as the shell id.
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.job_id }, { agent })
    expect(result.value).toMatchObject({ success: true, shell_id: bg.shell_id, outcome: 'terminated', signal_sent: 'SIGTERM', survivors: [] })
    expect(pidsWithArgv0(mark)).toEqual([])
    const job = host.ctx.jobs.get(JobId(bg.job_id as string), agent)
    expect(job).toMatchObject({ status: 'killed', reported: true })
    await host.ctx.jobs.wait(JobId(bg.job_id as string), 20_000, agent)
    expect(settled.map((snapshot) => [snapshot.id, snapshot.status, snapshot.reported])).toEqual([[bg.job_id, 'killed', true]])
    expect(host.adapter.requests).toHaveLength(0)
  })

  it('the job cancel carries out the stored request (force false keeps survivors, the job stays stopping)', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('jobnoforce')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, force: false, timeout: 200 }, { agent })
    const pids = pidsWithArgv0(mark)
    expect(pids).toHaveLength(1)
    expect(result.value).toMatchObject({ success: false, outcome: 'survivors', force_killed: false, survivors: pids })
    // The job's cancel carried the stored request out and consumed it (a later job_kill is a bare one).
    expect(result.value).toMatchObject({ signal_sent: 'SIGTERM', timeout_ms: 200 })
    expect(host.ctx.jobs.get(JobId(bg.job_id as string), agent).status).toBe('stopping')
    // Finish it here: teardown is the dispose test's subject, not this one's.
    for (const pid of pids) process.kill(pid, 'SIGKILL')
    await host.shells.settled(bg.shell_id)
  })

  it("after the host's job_kill (SIGTERM, then SIGKILL after 5 s), kill_shell answers already exited", async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('jobkill')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const settled = settlements(host)
    const killed = await execTool(host.ctx, 'job_kill', { job_id: bg.job_id }, { agent })
    expect(textOf(killed)).toBe(`requested cancellation of job ${bg.job_id}`)
    const record = await host.shells.settled(bg.shell_id)
    expect(record.status).toBe('killed')
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(groupPids(bg.pid)).toEqual([])
    // The bare cancel escalated: the TERM-ignoring sleeper died of SIGKILL.
    expect(record.signal).toBe('SIGKILL')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id }, { agent })
    expect(result.value).toMatchObject({ success: true, outcome: 'already-exited', signal_sent: 'none', note: 'Shell already killed' })
    expect(textOf(result)).toBe(`Shell already killed: ${bg.shell_id}. No signal sent.`)
    await host.ctx.jobs.wait(JobId(bg.job_id as string), 20_000, agent)
    expect(settled.map((snapshot) => [snapshot.id, snapshot.status, snapshot.reported])).toEqual([[bg.job_id, 'killed', true]])
    expect(host.adapter.requests).toHaveLength(0)
  })

  it('a kill request the host never passed on is not left on the record (jobs.kill throws)', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('refused')
    const bg = await startBg(host, `trap '' INT; exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    // The one injected fault: the host's job registry refuses the kill.
    const jobs = host.ctx.get('jobs') as JobRegistry
    vi.spyOn(jobs, 'kill').mockImplementationOnce(() => { throw new Error('job registry refused the kill') })
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGINT', force: false, timeout: 200 }, { agent })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('job registry refused the kill')
    expect(alive(bg.pid)).toBe(true)
    // The user's job_kill is a bare one (SIGTERM), not the refused SIGINT request the sleeper would ignore.
    expect(jobs.kill(JobId(bg.job_id as string), agent)).toBe('requested')
    expect(await jobs.wait(JobId(bg.job_id as string), 10_000, agent)).toMatchObject({ status: 'killed', detail: 'signal: SIGTERM' })
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it('joining the host job_kill under way, kill_shell reports the wait that applied (the bare cancel\'s), not its own', async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('joinjobkill')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    expect(textOf(await execTool(host.ctx, 'job_kill', { job_id: bg.job_id }, { agent }))).toBe(`requested cancellation of job ${bg.job_id}`)
    // The bare cancel's wait lives in tool-bash-bg; this call's 300 ms does not apply to the kill it joins.
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 300 }, { agent })
    expect(result.value).toMatchObject({ success: true, outcome: 'force-killed', force_killed: true, timeout_ms: 5000 })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: joined the stop already under way, which sent SIGTERM, still running after 5000 ms, then SIGKILL; all processes exited after N ms.`)
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it("refuses another session's shell, by shell id and by job id, as job_kill does", async () => {
    host = await bootKs({ jobs: true })
    const owner = host.agent()
    const stranger = host.agent()
    const bg = await startBg(host, 'sleep 60', owner)
    for (const id of [bg.shell_id, bg.job_id as string]) {
      const result = await execTool(host.ctx, 'kill_shell', { shell_id: id }, { agent: stranger })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toBe(`Error: shell ${bg.shell_id} belongs to another session — only the session that started it can stop it`)
    }
    const noAgent = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(textOf(noAgent)).toContain('belongs to another session')
    const hostJobKill = await execTool(host.ctx, 'job_kill', { job_id: bg.job_id }, { agent: stranger })
    expect(textOf(hostJobKill)).toContain('belongs to another session')
    expect(alive(bg.pid)).toBe(true)
    // The stranger's not-found list does not show the owner's shells.
    const unknown = await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-nope00' }, { agent: stranger })
    expect(textOf(unknown)).toBe('Error: Shell not found: bg-nope00\nKnown shells: none.\nUse /tasks to see available background shells.')
  })
})
