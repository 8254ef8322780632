import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { peek, alive, bootKs, statOf, groupPids, marker, normalized, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

const IGNORE_TERM = "trap '' TERM"

describe('kill_shell on real process groups', () => {
  it('stops a shell that honours SIGTERM: value, text, and an empty group', async () => {
    host = await bootKs()
    const mark = marker('term')
    const bg = await startBg(host, `exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.isError).toBe(false)
    expect(result.value).toMatchObject({
      success: true, shell_id: bg.shell_id, outcome: 'terminated', signal_sent: 'SIGTERM', force_killed: false,
      exit_code: null, survivors: [], timeout_ms: 5000, command: `exec -a ${mark} sleep 60`,
    })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM; all processes exited after N ms. No SIGKILL needed.`)
    expect(groupPids(bg.pid)).toEqual([])
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(peek(host, bg.shell_id)).toMatchObject({ status: 'killed', signal: 'SIGTERM' })
    // The card is drawn from the meta the runtime persists with the result (what a replay has).
    expect(result.meta).toEqual(result.value)
    const card = host.ctx.tools.get('kill_shell')?.presentResult?.({ shell_id: bg.shell_id }, { content: result.content, isError: false, ...result.meta === undefined ? {} : { meta: result.meta } })
    expect(card).toMatchObject({ card: 'generic', title: 'Process Terminated' })
  })

  it('escalates to SIGKILL for a group that ignores SIGTERM', async () => {
    host = await bootKs()
    const mark = marker('ignore')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 300 })
    expect(result.value).toMatchObject({ success: true, outcome: 'force-killed', signal_sent: 'SIGTERM', force_killed: true, survivors: [], timeout_ms: 300 })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM, still running after 300 ms, then SIGKILL; all processes exited after N ms.`)
    expect((result.value as { elapsed_ms: number }).elapsed_ms).toBeGreaterThanOrEqual(300)
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(groupPids(bg.pid)).toEqual([])
  })

  it('a call that joins a kill under way reports the wait that applied, not its own', async () => {
    host = await bootKs()
    const flag = join(host.cwd, 'got-term')
    // The shell survives SIGTERM (its handler notes it) until SIGKILL.
    const script = `process.on('SIGTERM', () => require('fs').writeFileSync(${JSON.stringify(flag)}, '')); require('fs').writeFileSync(${JSON.stringify(flag + '.ready')}, ''); setInterval(() => {}, 1000)`
    const bg = await startBg(host, `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}`)
    await until(() => existsSync(`${flag}.ready`), 'the handler to be installed')
    const first = execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 1500 })
    await until(() => existsSync(flag), 'the first call to have sent SIGTERM')
    const second = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 300 })
    expect(second.value).toMatchObject({ success: true, outcome: 'force-killed', force_killed: true, timeout_ms: 1500 })
    expect(normalized(textOf(second))).toBe(`Stopped ${bg.shell_id}: joined the stop already under way, which sent SIGTERM, still running after 1500 ms, then SIGKILL; all processes exited after N ms.`)
    expect((await first).value).toMatchObject({ outcome: 'force-killed', timeout_ms: 1500 })
    expect(groupPids(bg.pid)).toEqual([])
  })

  it('the configured timeoutMs is the wait a call without timeout gets', async () => {
    host = await bootKs({ killShell: { timeoutMs: 300 } })
    const mark = marker('cfgtimeout')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const stop = vi.spyOn(host.shells, 'stop')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(stop.mock.calls).toEqual([[bg.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 300 }, undefined]])
    expect(result.value).toMatchObject({ success: true, outcome: 'force-killed', force_killed: true, timeout_ms: 300 })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM, still running after 300 ms, then SIGKILL; all processes exited after N ms.`)
    expect((result.value as { elapsed_ms: number }).elapsed_ms).toBeGreaterThanOrEqual(300)
    expect(peek(host, bg.shell_id)).toMatchObject({ status: 'killed', signal: 'SIGKILL' })
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it('stops a group whose leader already exited (sleep 60 & exit 0)', async () => {
    host = await bootKs()
    const mark = marker('leaderless')
    const bg = await startBg(host, `(exec -a ${mark} sleep 60) & exit 0`)
    await until(() => peek(host, bg.shell_id)?.leader_exited_at !== null && pidsWithArgv0(mark).length === 1, 'the leader to exit while its child lives on')
    expect(peek(host, bg.shell_id)).toMatchObject({ status: 'running', exit_code: 0 })
    const child = pidsWithArgv0(mark)[0] as number
    expect(groupPids(bg.pid)).toEqual([child])
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', signal_sent: 'SIGTERM', force_killed: false, exit_code: 0, survivors: [] })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGTERM; all processes exited after N ms (exit code 0). No SIGKILL needed.`)
    expect(alive(child)).toBe(false)
    expect(groupPids(bg.pid)).toEqual([])
    expect(peek(host, bg.shell_id)?.status).toBe('killed')
  })

  it('with force false reports the survivors, fails, and leaves them running', async () => {
    host = await bootKs()
    const mark = marker('noforce')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, force: false, timeout: 200 })
    const pids = pidsWithArgv0(mark)
    expect(pids).toHaveLength(1)
    expect(result.value).toMatchObject({ success: false, outcome: 'survivors', signal_sent: 'SIGTERM', force_killed: false, survivors: pids })
    expect(normalized(textOf(result))).toBe(`Not stopped ${bg.shell_id}: sent SIGTERM (force=false, no SIGKILL sent); 1 process still alive after N ms: ${pids[0]}. Retry with signal SIGKILL.`)
    expect(peek(host, bg.shell_id)?.status).toBe('running')
    // Following the text's advice finishes the job.
    const again = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL', force: false })
    expect(again.value).toMatchObject({ success: true, outcome: 'terminated', signal_sent: 'SIGKILL', force_killed: false, survivors: [] })
    expect(normalized(textOf(again))).toBe(`Stopped ${bg.shell_id}: sent SIGKILL; all processes exited after N ms.`)
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it('delivers SIGINT to a process that handles it (exit code from its handler)', async () => {
    host = await bootKs()
    const flag = join(host.cwd, 'got-sigint')
    const script = `process.on('SIGINT', () => { require('fs').writeFileSync(${JSON.stringify(flag)}, 'int'); process.exit(7) }); require('fs').writeFileSync(${JSON.stringify(flag + '.ready')}, ''); setInterval(() => {}, 1000)`
    const bg = await startBg(host, `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}`)
    await until(() => existsSync(`${flag}.ready`), 'the handler to be installed')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGINT' })
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', signal_sent: 'SIGINT', force_killed: false, exit_code: 7 })
    expect(normalized(textOf(result))).toBe(`Stopped ${bg.shell_id}: sent SIGINT; all processes exited after N ms (exit code 7). No SIGKILL needed.`)
    expect(readFileSync(flag, 'utf8')).toBe('int')
  })

  it('reaches grandchildren and a double-forked daemon that stayed in the group', async () => {
    host = await bootKs()
    const kid = marker('kid')
    const grand = marker('grand')
    const daemon = marker('daemon')
    // A child, a grandchild under a subshell, and a daemon whose parent exits at once (reparented, same group).
    const command = `(exec -a ${kid} sleep 60) & (bash -c "exec -a ${grand} sleep 60" & wait) & ( (exec -a ${daemon} sleep 60) & ) ; wait`
    const bg = await startBg(host, command)
    await until(() => [kid, grand, daemon].every((mark) => pidsWithArgv0(mark).length === 1), 'all descendants')
    const pids = [kid, grand, daemon].flatMap(pidsWithArgv0)
    const daemonPid = pidsWithArgv0(daemon)[0] as number
    // The daemon's parent subshell exited: it was reparented, yet it is still in the shell's group.
    await until(() => statOf(daemonPid)?.ppid !== undefined && !groupPids(bg.pid).includes(statOf(daemonPid)?.ppid ?? -1), 'the daemon to be orphaned')
    for (const pid of pids) expect(groupPids(bg.pid)).toContain(pid)
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toMatchObject({ success: true, survivors: [] })
    for (const pid of pids) expect(alive(pid)).toBe(false)
    expect(groupPids(bg.pid)).toEqual([])
  })

  it('measures survivors on /proc itself: a registry whose tracking lost a live process cannot report success', async () => {
    host = await bootKs()
    const mark = marker('lost')
    const bg = await startBg(host, `${IGNORE_TERM}; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    // The one injected fault: the shell's cached view of its processes says none are left.
    type Shells = Map<string, { processes: { members: () => number[] } }>
    const shell = (host.shells as unknown as { shells: Shells }).shells.get(bg.shell_id)
    if (shell === undefined) throw new Error('no tracked shell')
    shell.processes.members = () => []
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, force: false, timeout: 200 })
    expect(result.value).toMatchObject({ success: false, outcome: 'survivors', survivors: pidsWithArgv0(mark) })
    expect(normalized(textOf(result))).toBe(`Not stopped ${bg.shell_id}: sent SIGTERM (force=false, no SIGKILL sent); 1 process still alive after N ms: ${bg.pid}. Retry with signal SIGKILL.`)
    expect(alive(bg.pid)).toBe(true)
  })

  it('answers already-exited for a shell that finished, and sends nothing', async () => {
    host = await bootKs()
    const bg = await startBg(host, 'exit 3')
    await host.shells.settled(bg.shell_id)
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(result.value).toEqual({
      success: true, shell_id: bg.shell_id, outcome: 'already-exited', signal_sent: 'none', force_killed: false,
      exit_code: 3, elapsed_ms: 0, survivors: [], timeout_ms: 5000, command: 'exit 3', note: 'Shell already completed',
    })
    expect(textOf(result)).toBe(`Shell already completed: ${bg.shell_id} (exit code 3). No signal sent.`)
  })

  it('rejects an unknown id with the README not-found text and the known ids', async () => {
    host = await bootKs({ killShell: { maxEntries: 1 } })
    const one = await startBg(host, 'sleep 60')
    const two = await startBg(host, 'exit 0')
    await host.shells.settled(two.shell_id)
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-zzzzzz' })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(new RegExp(`^Error: Shell not found: bg-zzzzzz\nKnown shells: ${one.shell_id} \\(running \\d+s, no output\\), … \\(\\+1 more\\)\\.\nUse /tasks to see available background shells\\.$`))
    // A raw pid is not a shell id: nothing is signalled.
    const byPid = await execTool(host.ctx, 'kill_shell', { shell_id: String(one.pid) })
    expect(textOf(byPid).startsWith(`Error: Shell not found: ${one.pid}\n`)).toBe(true)
    expect(alive(one.pid)).toBe(true)
  })
})
