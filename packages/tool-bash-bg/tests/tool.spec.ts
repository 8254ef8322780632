import { mkdir, readdir, rm, stat, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import * as ShellEnv from '@deepseek-ai/dsh-shell-env'
import { bootHost, execTool, textOf } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { OUTPUT_HELD_OPEN } from '../src/tool/render.ts'
import { bootBashBg, membersOf, peek, marker, pidsWithMarker, until, type BgHost } from './harness.ts'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

interface Bg { shell_id: string, pid: number, output_file: string, job_id?: string }

async function startBg(h: BgHost, command: string, extra: object = {}): Promise<Bg> {
  const result = await execTool(h.ctx, 'bash_bg', { command, run_in_background: true, ...extra })
  if (result.isError) throw new Error(textOf(result))
  return result.value as unknown as Bg
}

describe('foreground', () => {
  it('returns stdout, stderr and the exit code, and runs in the workspace', async () => {
    host = await bootBashBg()
    const result = await execTool(host.ctx, 'bash_bg', { command: 'pwd; echo oops >&2; exit 4' })
    expect(result.isError).toBe(false)
    expect(result.value).toEqual({
      kind: 'foreground', exit_code: 4, signal: null, timed_out: false, timeout_ms: 120000,
      stdout: { text: `${host.cwd}\n`, cut: 0 }, stderr: { text: 'oops\n', cut: 0 }, leftovers_stopped: 0, output_held_open: false,
    })
    expect(textOf(result)).toBe(`${host.cwd}\n[stderr]\noops\n[exit code: 4]`)
  })

  it('keeps the tail of a long stream and says how much was cut', async () => {
    host = await bootBashBg({ maxOutputBytes: 100 })
    const result = await execTool(host.ctx, 'bash_bg', { command: 'seq 1 1000' })
    const value = result.value as { stdout: { text: string, cut: number } }
    expect(Buffer.byteLength(value.stdout.text)).toBe(100)
    expect(value.stdout.text.endsWith('999\n1000\n')).toBe(true)
    expect(value.stdout.cut).toBe(3893 - 100)
    expect(textOf(result).startsWith('[stdout cut: the first 3793 bytes are not shown;')).toBe(true)
  })

  it('kills the whole group at the timeout', async () => {
    host = await bootBashBg()
    const mark = marker('fgtimeout')
    const result = await execTool(host.ctx, 'bash_bg', { command: `bash -c 'exec -a ${mark} sleep 60' & sleep 60`, timeout: 300 })
    expect(result.isError).toBe(false)
    expect(result.value).toMatchObject({ timed_out: true, signal: 'SIGTERM', exit_code: null })
    expect(textOf(result)).toBe('(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('stops leftover group members once the command is over', async () => {
    host = await bootBashBg()
    const mark = marker('leftover')
    const result = await execTool(host.ctx, 'bash_bg', { command: `(exec -a ${mark} sleep 60) >/dev/null 2>&1 & echo done` })
    expect(result.value).toMatchObject({ exit_code: 0, leftovers_stopped: 1 })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  // A process that left the group (setsid) kept the pipes open: the call ignored its timeout and waited for it.
  it('a setsid child that left the group is still the command\'s: it is stopped as a leftover, at the end or at the timeout', async () => {
    host = await bootBashBg()
    const mark = marker('setsid')
    const done = await execTool(host.ctx, 'bash_bg', { command: `setsid bash -c 'exec -a ${mark} sleep 20' & echo hi` })
    expect(done.value).toMatchObject({ exit_code: 0, timed_out: false, leftovers_stopped: 1, output_held_open: false, stdout: { text: 'hi\n', cut: 0 } })
    expect(textOf(done)).toBe('hi\n[stopped 1 leftover process of this command; use run_in_background for servers]')
    expect(pidsWithMarker(mark, true)).toEqual([])

    const markTimeout = marker('setsidtimeout')
    const timedOut = await execTool(host.ctx, 'bash_bg', { command: `setsid bash -c 'exec -a ${markTimeout} sleep 20' & exec sleep 20`, timeout: 300 })
    expect(timedOut.value).toMatchObject({ timed_out: true, signal: 'SIGTERM', output_held_open: false })
    expect(textOf(timedOut)).toBe('(no output)\n[timed out after 300ms]\n[killed by signal: SIGTERM]')
    expect(pidsWithMarker(markTimeout, true)).toEqual([])
  })

  it('without a cgroup, a process that cleared its environment and left the group is unseen: reading stops and says so', async () => {
    process.env.DSH_BG_TRACKING = 'marks'
    host = await bootBashBg()
    const escaped: number[] = []
    try {
      const mark = marker('envi')
      const done = await execTool(host.ctx, 'bash_bg', { command: `env -i setsid bash -c 'exec -a ${mark} sleep 20' & echo hi` })
      expect(done.value).toMatchObject({ exit_code: 0, timed_out: false, leftovers_stopped: 0, output_held_open: true, stdout: { text: 'hi\n', cut: 0 } })
      expect(textOf(done)).toBe(`hi\n${OUTPUT_HELD_OPEN}`)
      escaped.push(...pidsWithMarker(mark, true))
      expect(escaped).toHaveLength(1)
    } finally {
      delete process.env.DSH_BG_TRACKING
      for (const pid of escaped) process.kill(pid, 'SIGKILL')
    }
  })

  it('output a group member holds open is read to the end, without the held-open note', async () => {
    host = await bootBashBg()
    const result = await execTool(host.ctx, 'bash_bg', { command: '(sleep 1.5; echo late) & echo early' })
    expect(result.value).toMatchObject({ exit_code: 0, output_held_open: false, leftovers_stopped: 0, stdout: { text: 'early\nlate\n', cut: 0 } })
  })

  it('aborts during execution: the group dies and the call fails as aborted', async () => {
    host = await bootBashBg()
    const mark = marker('fgabort')
    const controller = new AbortController()
    const pending = execTool(host.ctx, 'bash_bg', { command: `exec -a ${mark} sleep 60` }, { signal: controller.signal })
    await until(() => pidsWithMarker(mark).length > 0, 'the command to start')
    controller.abort()
    const result = await pending
    expect(result.isError).toBe(true)
    expect(result.error?.info?.code).toBe('ABORTED')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('refuses a pre-aborted call before dispatch, for both modes', async () => {
    host = await bootBashBg()
    for (const run_in_background of [false, true]) {
      const result = await execTool(host.ctx, 'bash_bg', { command: 'echo x', run_in_background }, { signal: AbortSignal.abort() })
      expect(result.error?.info?.code).toBe('ABORTED_BEFORE_DISPATCH')
    }
    expect(host.shells.list(undefined)).toEqual([])
  })
})

describe('bad input', () => {
  it('names the argument and the value', async () => {
    host = await bootBashBg()
    const cases: [object, string][] = [
      [{ command: '   ' }, 'invalid command: expected a non-empty bash command, got an empty string'],
      [{ command: 'true', timeout: 0 }, 'invalid timeout: expected milliseconds from 1 to 600000, got 0 — omit it for the default 120000, or use run_in_background for longer commands'],
      [{ command: 'true', timeout: 600001 }, 'invalid timeout: expected milliseconds from 1 to 600000, got 600001 — omit it for the default 120000, or use run_in_background for longer commands'],
    ]
    for (const [args, message] of cases) {
      const result = await execTool(host.ctx, 'bash_bg', args)
      expect(result.isError).toBe(true)
      expect(result.error?.message).toBe(message)
      expect(result.error?.info?.code).toBe('INVALID_ARGS')
    }
    const notString = await execTool(host.ctx, 'bash_bg', { command: 42 })
    expect(notString.error?.info?.code).toBe('INVALID_ARGS')
  })

  // Found by packages/hardening (fuzz-bash-bg): both failed inside spawn() naming no argument.
  it('refuses a NUL or an over-long command naming the argument, in both modes, leaving no log behind', async () => {
    host = await bootBashBg()
    const long = `echo ${'x'.repeat(131_066)}`
    for (const run_in_background of [false, true]) {
      const nul = await execTool(host.ctx, 'bash_bg', { command: 'echo a\0b', run_in_background })
      expect(nul.error?.message).toBe("invalid command: it contains a NUL character, which no process argument can carry — remove it (printf '\\0' writes one)")
      const huge = await execTool(host.ctx, 'bash_bg', { command: `${long}x`, run_in_background })
      expect(huge.error?.message).toBe('invalid command: 131072 bytes is over the 131071-byte limit Linux puts on one process argument — write the script to a file and run that file')
      expect([nul.error?.info?.code, huge.error?.info?.code]).toEqual(['INVALID_ARGS', 'INVALID_ARGS'])
    }
    // The limit is exact: one byte less still runs.
    const fits = await execTool(host.ctx, 'bash_bg', { command: long })
    expect(fits.isError).toBe(false)
    expect((fits.value as { stdout: { cut: number } }).stdout.cut).toBeGreaterThan(0)
    expect(await readdir(host.shells.logDir)).toEqual([])
  })

  it('says when bash cannot be started, in both modes, leaving no log behind', async () => {
    host = await bootBashBg()
    const path = process.env.PATH
    process.env.PATH = '/nonexistent-bin'
    try {
      for (const run_in_background of [false, true]) {
        const result = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background })
        expect(result.error?.message).toBe('bash_bg: could not start bash — check that it is installed and on PATH')
        expect(result.error?.info?.code).toBe('SPAWN_FAILED')
      }
    } finally {
      process.env.PATH = path
    }
    expect(await readdir(host.shells.logDir)).toEqual([])
    expect(host.shells.list(undefined)).toEqual([])
  })

  it('the service refuses unknown ids with stable codes and hands out snapshots', async () => {
    host = await bootBashBg()
    await expect(host.shells.stop('bg-nope00', { signal: 'SIGTERM', force: true, timeoutMs: 1 }, undefined)).rejects.toMatchObject({ message: 'Shell not found: bg-nope00', code: 'SHELL_NOT_FOUND' })
    await expect(host.shells.settled('bg-nope00')).rejects.toMatchObject({ code: 'SHELL_NOT_FOUND' })
    const value = await startBg(host, 'true')
    // Reads are snapshots: a caller cannot change the registry's record.
    const record = peek(host, value.shell_id) as { status: string }
    expect(() => { record.status = 'killed' }).toThrow(TypeError)
    expect((await host.shells.settled(value.shell_id)).status).toBe('completed')
  })

  it('says when the working directory vanished', async () => {
    host = await bootBashBg()
    const gone = join(host.cwd, 'gone')
    await mkdir(gone)
    const agent = host.agent(gone)
    await rm(gone, { recursive: true })
    const result = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background: true }, { agent })
    expect(result.error?.message).toBe(`working directory ${gone} no longer exists — recreate it, or start the session in an existing directory`)
    expect(result.error?.info?.code).toBe('FS_NOT_FOUND')
  })
})

describe('background', () => {
  it('returns at once with an id, the leader pid and a private 0600 log outside the workspace', async () => {
    host = await bootBashBg()
    const mark = marker('bgstart')
    const value = await startBg(host, `exec -a ${mark} sleep 60`)
    expect(value.shell_id).toMatch(/^bg-[a-z0-9]{6}$/)
    expect(value).not.toHaveProperty('job_id')
    // The call returns at once: the leader may still be between fork and exec.
    await until(() => pidsWithMarker(mark).length > 0, 'the leader to exec')
    expect(pidsWithMarker(mark)).toEqual([value.pid])
    expect((await stat(value.output_file)).mode & 0o777).toBe(0o600)
    expect((await stat(host.shells.logDir)).mode & 0o777).toBe(0o700)
    expect(value.output_file.startsWith(`${host.shells.logDir}/`)).toBe(true)
    expect(value.output_file.startsWith(host.cwd)).toBe(false)
    expect(peek(host, value.shell_id)).toMatchObject({ status: 'running', owner: '', cwd: host.cwd, pid: value.pid })
  })

  // A timeout over the foreground maximum was refused even though a background shell has none.
  it('takes any timeout with run_in_background, ignores it and says so', async () => {
    host = await bootBashBg()
    for (const timeout of [900000, 5, -5]) {
      const result = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background: true, timeout })
      expect(result.isError).toBe(false)
      expect(result.value).toMatchObject({ kind: 'background', timeout_ignored: true })
      expect(textOf(result).split('\n').at(-1)).toBe('[timeout does not apply to background shells; ignored]')
    }
  })

  it('keeps logging a grandchild after the leader exits, and stays running until the group is empty', async () => {
    host = await bootBashBg()
    const value = await startBg(host, '(sleep 0.4; echo grandchild; echo late-err >&2) & echo leader')
    await until(() => peek(host, value.shell_id)?.leader_exited_at !== null, 'the leader to exit')
    expect(peek(host, value.shell_id)?.status).toBe('running')
    expect(membersOf(value.shell_id).length).toBeGreaterThan(0)
    const record = await host.shells.settled(value.shell_id)
    expect(record).toMatchObject({ status: 'completed', exit_code: 0, signal: null, capped: false })
    expect(await readFile(value.output_file, 'utf8')).toBe('leader\ngrandchild\nlate-err\n')
    expect(record.bytes).toBe(27)
    expect(Date.parse(record.ended_at ?? '')).toBeGreaterThanOrEqual(Date.parse(record.leader_exited_at ?? ''))
  })

  it('reports honest exit codes and signals', async () => {
    host = await bootBashBg()
    const exit = await startBg(host, 'exit 7')
    const signalled = await startBg(host, 'kill -TERM $$')
    expect(await host.shells.settled(exit.shell_id)).toMatchObject({ status: 'completed', exit_code: 7, signal: null })
    expect(await host.shells.settled(signalled.shell_id)).toMatchObject({ status: 'killed', exit_code: null, signal: 'SIGTERM' })
  })

  it('caps the log: capture stops, the writer is not blocked, the record says so', async () => {
    host = await bootBashBg({ maxLogBytes: 1000 })
    const value = await startBg(host, 'head -c 5000000 /dev/zero | tr "\\0" x; echo finished-writing >&2')
    const record = await host.shells.settled(value.shell_id)
    const log = await readFile(value.output_file, 'utf8')
    expect(log.length).toBe(1000)
    expect(log.endsWith('\n[bash_bg: log capped at 1000 bytes; later output was discarded]\n')).toBe(true)
    expect(record).toMatchObject({ status: 'completed', exit_code: 0, capped: true, bytes: 1000 })
  })

  it('terminate escalates to SIGKILL for a group that ignores SIGTERM and leaves nothing alive', async () => {
    host = await bootBashBg()
    const mark = marker('stubborn')
    const value = await startBg(host, `trap '' TERM; (trap '' TERM; exec -a ${mark} sleep 60) & exec -a ${mark} sleep 60`)
    await until(() => pidsWithMarker(mark, true).length === 2, 'both processes')
    const outcome = await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 200 }, undefined)
    expect(outcome).toMatchObject({ signal_sent: 'SIGTERM', force_killed: true, survivors: [], exit_code: null })
    expect(pidsWithMarker(mark)).toEqual([])
    expect(peek(host, value.shell_id)).toMatchObject({ status: 'killed', signal: 'SIGKILL' })
    // The group was observed empty: it is never signalled again.
    expect(await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 200 }, undefined)).toMatchObject({ signal_sent: 'none', survivors: [] })
  })

  it('a kill request that asks no more than the one under way shares it', async () => {
    host = await bootBashBg()
    const value = await startBg(host, 'sleep 60')
    const first = host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 1000 }, undefined)
    // The first one already ends in SIGKILL: nothing more to ask for.
    const second = host.shells.stop(value.shell_id, { signal: 'SIGKILL', force: true, timeoutMs: 1 }, undefined)
    const third = host.shells.stop(value.shell_id, { signal: 'SIGINT', force: false, timeoutMs: 1 }, undefined)
    // Each reports the kill that ran: its signal and its wait, not the request's.
    for (const shared of await Promise.all([first, second, third])) expect(shared).toMatchObject({ signal_sent: 'SIGTERM', timeout_ms: 1000, survivors: [] })
  })

  it('a forcing kill made while a non-forcing one is under way waits for it, then escalates', async () => {
    host = await bootBashBg()
    const mark = marker('escalate')
    const value = await startBg(host, `trap '' INT TERM; exec -a ${mark} sleep 60`)
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    const gentle = host.shells.stop(value.shell_id, { signal: 'SIGINT', force: false, timeoutMs: 300 }, undefined)
    const forcing = host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 100 }, undefined)
    expect(forcing).not.toBe(gentle)
    expect(await gentle).toMatchObject({ signal_sent: 'SIGINT', force_killed: false, survivors: pidsWithMarker(mark, true) })
    expect(await forcing).toMatchObject({ signal_sent: 'SIGTERM', force_killed: true, survivors: [] })
    expect(pidsWithMarker(mark)).toEqual([])
    expect(peek(host, value.shell_id)).toMatchObject({ status: 'killed', signal: 'SIGKILL' })
  })

  it('never signals a finished group, reports survivors without force', async () => {
    host = await bootBashBg()
    const done = await startBg(host, 'true')
    await host.shells.settled(done.shell_id)
    expect(await host.shells.stop(done.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 100 }, undefined)).toMatchObject({ signal_sent: 'none', survivors: [], exit_code: 0 })
    const mark = marker('survivor')
    const stubborn = await startBg(host, `trap '' TERM; exec -a ${mark} sleep 60`)
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    // An ignored SIGTERM survives exec.
    const outcome = await host.shells.stop(stubborn.shell_id, { signal: 'SIGTERM', force: false, timeoutMs: 150 }, undefined)
    expect(outcome.survivors).toEqual(pidsWithMarker(mark))
    expect(outcome.force_killed).toBe(false)
    expect(peek(host, stubborn.shell_id)?.status).toBe('running')
    // A later request runs anew: with force, nothing survives.
    expect(await host.shells.stop(stubborn.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 100 }, undefined)).toMatchObject({ force_killed: true, survivors: [] })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('limits running shells per session and lists them in the error', async () => {
    host = await bootBashBg({ maxEntries: 2 })
    const a = await startBg(host, 'sleep 60')
    const b = await startBg(host, 'sleep 61')
    const result = await execTool(host.ctx, 'bash_bg', { command: 'sleep 62', run_in_background: true })
    expect(result.error?.message).toMatch(new RegExp(`^too many background shells: this session already runs 2 \\(maxEntries 2\\): ${a.shell_id} \\(sleep 60; running \\d+s, no output\\), ${b.shell_id} \\(sleep 61; running \\d+s, no output\\) — wait for one to finish, then retry$`))
    const detach = host.shells.attachStopper({ toolName: 'kill_shell', defaultKill: { signal: 'SIGTERM', force: true, timeoutMs: 5000 } })
    expect((await execTool(host.ctx, 'bash_bg', { command: 'sleep 62', run_in_background: true })).error?.message).toMatch(/— stop one with kill_shell, then retry$/)
    expect(result.error?.info?.code).toBe('TOO_MANY_SHELLS')
    detach()
    expect((await execTool(host.ctx, 'bash_bg', { command: 'sleep 62', run_in_background: true })).error?.message).toMatch(/— wait for one to finish, then retry$/)
    await host.shells.stop(a.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 1000 }, undefined)
    expect((await execTool(host.ctx, 'bash_bg', { command: 'sleep 62', run_in_background: true })).isError).toBe(false)
  })

  it('drops finished shells past keepFinishedMs with their logs, never a running one', async () => {
    host = await bootBashBg({ keepFinishedMs: 1 })
    const done = await startBg(host, 'echo x')
    await host.shells.settled(done.shell_id)
    await new Promise((resolve) => setTimeout(resolve, 5))
    // The next start drops what is past its keep time.
    const running = await startBg(host, 'sleep 60')
    expect(host.shells.list(undefined).map((shell) => shell.id)).toEqual([running.shell_id])
    expect(peek(host, done.shell_id)).toBeUndefined()
    await expect(stat(done.output_file)).rejects.toThrow()
    expect(await readdir(host.shells.logDir)).toEqual([`${running.shell_id}.log`])
  })

  it('keeps a finished shell listed for keepFinishedMs (default an hour)', async () => {
    host = await bootBashBg()
    const value = await startBg(host, 'echo x')
    await host.shells.settled(value.shell_id)
    await startBg(host, 'true')
    expect(peek(host, value.shell_id)).toMatchObject({ status: 'completed' })
    expect((await stat(value.output_file)).isFile()).toBe(true)
  })

  it('runs with the scrubbed host env, the non-interactive defaults and ctx.shellEnv\'s DSH_* facts, in both modes', async () => {
    // A credential-shaped host variable and a stale DSH_* fact must not reach the command.
    process.env.FAKE_API_KEY = 'leaked-secret'
    process.env.DSH_STALE_FACT = 'stale'
    try {
      host = await bootBashBg({}, {
        before: async (h) => {
          await h.ctx.plugin(ShellEnv, { dshHome: '/srv/dsh-home' })
          h.ctx.shellEnv.register({
            name: 'bash-bg-test',
            variables: { DSH_TEST_FACT: { description: 'a fact for this test' } },
            resolve: () => ({ DSH_TEST_FACT: 'contributed' }),
          })
        },
      })
      const agent = host.agent()
      const command = 'echo "${FAKE_API_KEY-unset} ${DSH_STALE_FACT-unset} $DSH_HOME $DSH_SHELL $DSH_SESSION_ID $DSH_TEST_FACT $TERM $PAGER $NO_COLOR ${HOME:+home-kept}"'
      const expected = `unset unset /srv/dsh-home 1 ${agent.session.header.id} contributed dumb cat 1 home-kept\n`
      expect(textOf(await execTool(host.ctx, 'bash_bg', { command }, { agent }))).toBe(expected)
      const started = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true }, { agent })
      const bg = started.value as unknown as Bg
      await host.shells.settled(bg.shell_id)
      expect(await readFile(bg.output_file, 'utf8')).toBe(expected)
    } finally {
      delete process.env.FAKE_API_KEY
      delete process.env.DSH_STALE_FACT
    }
  })
})

describe('dispose', () => {
  it('disposing the plugin kills every running shell (verified in /proc), removes the tool, the section, the service and the logs', async () => {
    const base = await bootHost()
    host = Object.assign(base, { shells: undefined as unknown as BgHost['shells'] })
    const fiber = await base.ctx.plugin(BashBg, {})
    const shells = base.ctx.get('backgroundShells')
    if (shells === undefined) throw new Error('no backgroundShells service')
    host.shells = shells as BgHost['shells']
    const mark = marker('dispose')
    await startBg(host, `(exec -a ${mark} sleep 60) & exec -a ${mark} sleep 60`)
    const stubborn = await startBg(host, `trap '' INT TERM; exec -a ${mark} sleep 60`)
    await until(() => pidsWithMarker(mark, true).length === 3, 'three processes')
    // A kill_shell force:false still waiting must not swallow dispose's escalation to SIGKILL.
    void shells.stop(stubborn.shell_id, { signal: 'SIGINT', force: false, timeoutMs: 500 }, undefined)
    const logDir = shells.logDir
    const sections = async () => (await base.ctx.systemPrompt.assemble()).sections.map((section) => section.name)
    expect(base.ctx.tools.get('bash_bg')).toBeDefined()
    expect(await sections()).toContain('tool:bash_bg')
    await fiber.dispose()
    expect(pidsWithMarker(mark)).toEqual([])
    await expect(stat(logDir)).rejects.toThrow()
    expect(base.ctx.tools.get('bash_bg')).toBeUndefined()
    expect(await sections()).not.toContain('tool:bash_bg')
    expect(base.ctx.get('backgroundShells')).toBeUndefined()
  })
})
