// kill_shell says "all processes exited" only where the tracking in force sees every process (a cgroup); tracking by
// marks says what it could miss. Real shells, real escapees.
import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { newShellCgroup } from '../../tool-bash-bg/tests/harness.ts'
import { bootKs, marker, normalized, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
const strays: number[] = []
afterEach(async () => {
  delete process.env.DSH_BG_TRACKING
  await host?.dispose()
  host = undefined
  for (const pid of strays.splice(0)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
})

const probe = newShellCgroup()
probe?.remove()

describe.skipIf(probe === undefined)('with a cgroup per shell (skipped: no cgroup can be made here)', () => {
  it('an env -i setsid escapee dies with the shell, and only then "all processes exited"', async () => {
    host = await bootKs()
    const bare = marker('cgenvi')
    const bg = await startBg(host, `env -i setsid bash -c 'exec -a ${bare} sleep 60' & exec sleep 60`)
    await until(() => pidsWithArgv0(bare).length === 1, 'the escapee')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', survivors: [], tracking: 'cgroup' })
    expect(result.value).not.toHaveProperty('unseen')
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM; all processes exited after N ms. No SIGKILL needed.`)
    expect(pidsWithArgv0(bare)).toEqual([])
  })
})

describe('tracking by marks (forced, as where no cgroup can be had)', () => {
  it('never claims "all processes exited": the value and text name the escapee it cannot see', async () => {
    process.env.DSH_BG_TRACKING = 'marks'
    host = await bootKs()
    const bare = marker('marksenvi')
    const bg = await startBg(host, `env -i setsid bash -c 'exec -a ${bare} sleep 60' & exec sleep 60`)
    await until(() => pidsWithArgv0(bare).length === 1, 'the escapee')
    strays.push(...pidsWithArgv0(bare))
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toMatchObject({
      success: true, outcome: 'terminated', survivors: [], tracking: 'marks',
      unseen: 'a process that cleared its environment and left the group before a scan saw it',
    })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM; all tracked processes exited after N ms. No SIGKILL needed. Not seen by tracking without a cgroup: a process that cleared its environment and left the group before a scan saw it.`)
    // Just what the text warns of: the escapee runs on.
    expect(pidsWithArgv0(bare)).toHaveLength(1)
  })
})
