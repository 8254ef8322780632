import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootKs, groupPids, marker, pidsWithArgv0, startBg, statOf, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

/** A `setsid` child and a double-forked daemon (both out of the group), and the leader's own sleeper. */
const escapees = (mark: string, trap = '') =>
  `${trap}setsid bash -c '${trap}exec -a ${mark} sleep 60' & (setsid bash -c '${trap}(exec -a ${mark} sleep 60) &' &) ; sleep 0.1; exec -a ${mark} sleep 60`

describe('no escapes', () => {
  it('kill_shell stops processes that left the group with setsid or a double fork', async () => {
    host = await bootKs()
    const mark = marker('setsid')
    const bg = await startBg(host, escapees(mark))
    await until(() => pidsWithArgv0(mark).length === 3, 'three sleepers')
    expect(pidsWithArgv0(mark).filter((pid) => statOf(pid)?.pgrp !== bg.pid)).toHaveLength(2)
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', survivors: [] })
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(groupPids(bg.pid)).toEqual([])
  })

  it('with force false, survivors count the marked processes outside the group', async () => {
    host = await bootKs()
    const mark = marker('stubborn')
    const bg = await startBg(host, escapees(mark, "trap '' TERM; "))
    await until(() => pidsWithArgv0(mark).length === 3, 'three sleepers')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, force: false, timeout: 200 })
    const value = result.value as { success: boolean, survivors: number[] }
    expect(value.success).toBe(false)
    expect(value.survivors).toEqual(expect.arrayContaining(pidsWithArgv0(mark)))
    expect(pidsWithArgv0(mark).filter((pid) => statOf(pid)?.pgrp !== bg.pid)).toHaveLength(2)
    expect(textOf(result)).toMatch(/still alive after \d+ ms/)
    const forced = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL' })
    expect(forced.value).toMatchObject({ success: true, survivors: [] })
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it("the host's job_kill reaches them too", async () => {
    host = await bootKs({ jobs: true })
    const agent = host.agent()
    const mark = marker('jobescape')
    const bg = await startBg(host, escapees(mark), agent)
    await until(() => pidsWithArgv0(mark).length === 3, 'three sleepers')
    await execTool(host.ctx, 'job_kill', { job_id: bg.job_id }, { agent })
    expect((await host.shells.settled(bg.shell_id)).status).toBe('killed')
    expect(pidsWithArgv0(mark)).toEqual([])
  })
})

describe('optional arguments sent empty', () => {
  it('"" and null count as absent: the defaults apply', async () => {
    host = await bootKs()
    const mark = marker('empty')
    const bg = await startBg(host, `exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: '', force: null, timeout: '' })
    expect(result.value).toMatchObject({ success: true, signal_sent: 'SIGTERM', timeout_ms: 5000 })
    const again = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: null, force: '', timeout: null })
    expect(again.value).toMatchObject({ outcome: 'already-exited' })
    // A present, wrong value is still an error.
    expect((await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGHUP' })).isError).toBe(true)
  })
})
