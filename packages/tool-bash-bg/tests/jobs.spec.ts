import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import * as ToolJobsPlugin from '@deepseek-ai/dsh-tool-jobs'
import { JobId } from '@deepseek-ai/dsh-jobs'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, peek, marker, pidsWithMarker, until, type BgHost } from './harness.ts'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

interface Bg { shell_id: string, pid: number, output_file: string, job_id?: string }

const withJobs = () => bootBashBg({}, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, { completionDelivery: 'quiet' }) } })

describe('host jobs', () => {
  it('makes each shell a bash_bg job: job_list, job_output and job_kill work on it', async () => {
    host = await withJobs()
    const agent = host.agent()
    const mark = marker('jobkill')
    const started = await execTool(host.ctx, 'bash_bg', { command: `echo first; (exec -a ${mark} sleep 60) & exec -a ${mark} sleep 60`, run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    expect(value.job_id).toBe('bash_bg-1')
    expect(textOf(started)).toContain(`(pid ${value.pid}, job bash_bg-1)`)
    expect(host.shells.find('bash_bg-1', agent)?.id).toBe(value.shell_id)
    expect(peek(host, value.shell_id, agent)?.owner).toBe(agent.id)

    const list = await execTool(host.ctx, 'job_list', {}, { agent })
    expect(JSON.stringify(list.value)).toContain('"kind":"bash_bg"')

    await until(() => peek(host, value.shell_id, agent)?.bytes === 6, 'the first line')
    await until(() => pidsWithMarker(mark, true).length === 2, 'both processes')
    const output = await execTool(host.ctx, 'job_output', { job_id: 'bash_bg-1' }, { agent })
    expect(textOf(output)).toBe('first\n[status: running]')

    const kill = await execTool(host.ctx, 'job_kill', { job_id: 'bash_bg-1' }, { agent })
    expect(kill.isError).toBe(false)
    const record = await host.shells.settled(value.shell_id)
    expect(record.status).toBe('killed')
    expect(pidsWithMarker(mark)).toEqual([])
    const snapshot = await host.ctx.jobs.wait(JobId('bash_bg-1'), 5000, agent)
    expect(snapshot).toMatchObject({ status: 'killed', detail: 'signal: SIGTERM' })
  })

  it('a bare job_kill carries out the attached stopper\'s defaultKill (what tool-kill-shell configures)', async () => {
    host = await withJobs()
    const agent = host.agent()
    const mark = marker('defkill')
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM INT; exec -a ${mark} sleep 60`, run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    host.shells.attachStopper({ toolName: 'kill_shell', defaultKill: { signal: 'SIGINT', force: true, timeoutMs: 100 } })
    const kill = await execTool(host.ctx, 'job_kill', { job_id: value.job_id }, { agent })
    expect(kill.isError).toBe(false)
    // A stop asking no more than the kill under way joins it and reports that kill.
    const outcome = await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: false, timeoutMs: 1 }, agent)
    // The first signal was the configured one, not a hard-coded SIGTERM; it escalated.
    expect(outcome).toMatchObject({ signal_sent: 'SIGINT', force_killed: true, survivors: [] })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('stop goes through the host jobs: the job\'s cancel carries out the stop\'s request and the host records the kill', async () => {
    host = await withJobs()
    const agent = host.agent()
    const mark = marker('killreq')
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM INT; exec -a ${mark} sleep 60`, run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    const outcome = await host.shells.stop(value.shell_id, { signal: 'SIGINT', force: true, timeoutMs: 100 }, agent)
    expect(outcome).toMatchObject({ outcome: 'force-killed', signal_sent: 'SIGINT', force_killed: true, survivors: [], timeout_ms: 100 })
    expect(outcome.shell).toMatchObject({ id: value.shell_id, status: 'killed' })
    expect(outcome.shell).not.toHaveProperty('kill_request')
    expect(pidsWithMarker(mark)).toEqual([])
    expect(await host.ctx.jobs.wait(JobId(value.job_id ?? ''), 5000, agent)).toMatchObject({ status: 'killed', detail: 'signal: SIGKILL', reported: true })
  })

  it('a stop\'s request is carried out once: the user\'s job_kill after it is a bare job_kill', async () => {
    host = await withJobs()
    const agent = host.agent()
    const mark = marker('killreqonce')
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' INT; exec -a ${mark} sleep 60`, run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    const jobId = JobId(value.job_id ?? '')
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    // kill_shell with force: false, which the process survives.
    const gentle = await host.shells.stop(value.shell_id, { signal: 'SIGINT', force: false, timeoutMs: 100 }, agent)
    expect(gentle).toMatchObject({ outcome: 'survivors', signal_sent: 'SIGINT', survivors: pidsWithMarker(mark, true) })
    expect(host.ctx.jobs.get(jobId, agent)?.status).toBe('stopping')
    // The user's job_kill: SIGTERM (not the stop's SIGINT again), which this process does not ignore.
    expect(host.ctx.jobs.kill(jobId, agent)).toBe('requested')
    expect(await host.ctx.jobs.wait(jobId, 10_000, agent)).toMatchObject({ status: 'killed', detail: 'signal: SIGTERM' })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('stop refuses another session and an unknown id, and answers already-exited for a finished job', async () => {
    host = await withJobs()
    const agent = host.agent()
    const stranger = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await expect(host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 100 }, stranger)).rejects.toMatchObject({ code: 'SHELL_FOREIGN' })
    expect(() => host?.shells.find(value.shell_id, undefined)).toThrow(expect.objectContaining({ code: 'SHELL_FOREIGN' }))
    await expect(host.shells.stop('bg-nope00', { signal: 'SIGTERM', force: true, timeoutMs: 100 }, agent)).rejects.toMatchObject({ code: 'SHELL_NOT_FOUND' })
    await host.shells.settled(value.shell_id)
    expect(await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 100 }, agent)).toMatchObject({ outcome: 'already-exited', signal_sent: 'none', exit_code: 0 })
  })

  it('settles the job with the real exit code after the group is empty, and the owner gets the notice', async () => {
    host = await bootBashBg({}, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, {}) } })
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: '(sleep 0.3; echo child-done) & exit 5', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    // No job_output/wait here: either would count as reporting and suppress the notice.
    await host.shells.settled(value.shell_id)
    // The log was complete when the shell settled.
    expect(await readFile(value.output_file, 'utf8')).toBe('child-done\n')
    await until(() => host?.adapter.requests.some((request) => JSON.stringify(request.messages).includes(`background job ${value.job_id} (bash_bg: (sleep 0.3; echo child-done) & exit 5) finished [status: completed, exit code: 5]`)) === true, 'the completion notice')
    expect(host.ctx.jobs.get(JobId(value.job_id ?? ''), agent)).toMatchObject({ status: 'completed', detail: 'exit code: 5' })
  })

  it('job_output returns at most maxOutputBytes of new output, the newest, and says what it skipped', async () => {
    host = await bootBashBg({ maxOutputBytes: 100 }, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, { completionDelivery: 'quiet' }) } })
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'seq 1 1000', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await host.shells.settled(value.shell_id)
    const log = await readFile(value.output_file, 'utf8')
    expect(log.length).toBe(3893)
    const first = await execTool(host.ctx, 'job_output', { job_id: value.job_id }, { agent })
    expect(textOf(first)).toBe(`[3793 earlier bytes skipped; the whole log is ${value.output_file}]\n${log.slice(-100)}[status: completed, exit code: 0]`)
    // The cursor moved to the end: nothing new the second time.
    const second = await execTool(host.ctx, 'job_output', { job_id: value.job_id }, { agent })
    expect(textOf(second)).toBe('(no new output)\n[status: completed, exit code: 0]')
  })

  it('a job_output read that starts inside a UTF-8 character skips its remaining bytes', async () => {
    host = await bootBashBg({ maxOutputBytes: 10 }, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, { completionDelivery: 'quiet' }) } })
    const agent = host.agent()
    // é is 2 bytes, € 3: the newest 10 of the 27 bytes start inside the last é.
    const started = await execTool(host.ctx, 'bash_bg', { command: "printf 'ééééééééé'; printf '€€€'", run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await host.shells.settled(value.shell_id)
    const text = textOf(await execTool(host.ctx, 'job_output', { job_id: value.job_id }, { agent }))
    expect(text).toBe(`[18 earlier bytes skipped; the whole log is ${value.output_file}]\n€€€\n[status: completed, exit code: 0]`)
  })

  it('says in the job detail when the log was capped', async () => {
    host = await bootBashBg({ maxLogBytes: 500 }, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, { completionDelivery: 'quiet' }) } })
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'seq 1 10000', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    expect(await host.ctx.jobs.wait(JobId(value.job_id ?? ''), 10_000, agent)).toMatchObject({ status: 'completed', detail: 'exit code: 0; log capped at 500 bytes' })
  })

  it('runs on the registry alone when no job controller serves the caller', async () => {
    host = await bootBashBg()
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background: true }, { agent })
    expect(started.isError).toBe(false)
    expect(started.value).not.toHaveProperty('job_id')
    expect(host.ctx.jobs.list(agent)).toEqual([])
  })
})
