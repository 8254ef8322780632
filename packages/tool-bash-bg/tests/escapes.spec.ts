import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, membersOf, peek, marker, pidsWithMarker, until, type BgHost } from './harness.ts'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

interface Bg { shell_id: string, pid: number }

/** A `setsid` child and a double-forked daemon: both leave the shell's process group. */
const escapees = (mark: string) =>
  `setsid bash -c 'exec -a ${mark} sleep 60' & (setsid bash -c '(exec -a ${mark} sleep 60) &' &) ; sleep 0.1; exec -a ${mark} sleep 60`

function pgrpOf(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.split(' ')[2])
}

function environOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')
}

async function start(h: BgHost, command: string): Promise<Bg> {
  const result = await execTool(h.ctx, 'bash_bg', { command, run_in_background: true })
  if (result.isError) throw new Error(textOf(result))
  return result.value as unknown as Bg
}

const sandboxed = () => bootBashBg({}, {
  before: async (h) => {
    await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
    await h.ctx.plugin(LocalSandboxProvider, {})
  },
})

describe.each([
  ['plain', () => bootBashBg()],
  ['under the sandbox runner', sandboxed],
])('no escapes (%s)', (_name, boot) => {
  it('every process carries DSH_BG_SHELL; terminate reaches setsid children and double-forked daemons, and survivors counts them', async () => {
    host = await boot()
    const mark = marker('escape')
    const shell = await start(host, escapees(mark))
    await until(() => pidsWithMarker(mark, true).length === 3, 'three processes')
    const pids = pidsWithMarker(mark, true)
    // Two of them left the group: a plain group kill would miss them.
    expect(pids.filter((pid) => pgrpOf(pid) !== shell.pid)).toHaveLength(2)
    for (const pid of pids) expect(environOf(pid)).toContain(`DSH_BG_SHELL=${shell.shell_id}`)
    expect(membersOf(shell.shell_id)).toEqual([...pids].sort((a, b) => a - b))
    const outcome = await host.shells.stop(shell.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, undefined)
    expect(outcome.survivors).toEqual([])
    expect(pidsWithMarker(mark)).toEqual([])
    expect(membersOf(shell.shell_id)).toEqual([])
  })
})

describe('a daemon the leader left behind', () => {
  it('keeps the shell running, with the leader\'s exit code and how many processes remain, until it is stopped', async () => {
    host = await bootBashBg()
    const mark = marker('daemon')
    const shell = await start(host, `(setsid bash -c '(exec -a ${mark} sleep 60) &' &); (setsid bash -c 'exec -a ${mark} sleep 60' &); exit 5`)
    await until(() => peek(host, shell.shell_id)?.leader_exited_at !== null && pidsWithMarker(mark, true).length === 2, 'the leader to exit, leaving two daemons')
    await until(() => peek(host, shell.shell_id)?.processes === 2, 'the watcher to count what is left')
    const record = peek(host, shell.shell_id)
    expect(record).toMatchObject({ status: 'running', exit_code: 5, processes: 2 })
    expect(host.shells.liveness(record!)).toMatch(/^running \d+s \(leader exit 5, 2 left\), no output$/)
    const outcome = await host.shells.stop(shell.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, undefined)
    expect(outcome).toMatchObject({ signal_sent: 'SIGTERM', survivors: [] })
    expect(pidsWithMarker(mark)).toEqual([])
    expect((await host.shells.settled(shell.shell_id)).status).toBe('killed')
  })

  it('a shell whose daemons exit on their own completes', async () => {
    host = await bootBashBg()
    const shell = await start(host, "(setsid bash -c 'sleep 0.3' &); exit 0")
    expect(await host.shells.settled(shell.shell_id)).toMatchObject({ status: 'completed', exit_code: 0, processes: 0 })
  })
})

describe('dispose', () => {
  it('stops marked processes outside the group too', async () => {
    host = await bootBashBg()
    const mark = marker('dispose')
    await start(host, escapees(mark))
    await until(() => pidsWithMarker(mark, true).length === 3, 'three processes')
    await host.dispose()
    host = undefined
    expect(pidsWithMarker(mark)).toEqual([])
  })
})
