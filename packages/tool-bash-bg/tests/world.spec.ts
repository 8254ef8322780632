import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import { JobId } from '@deepseek-ai/dsh-jobs'
import { SessionId } from '@deepseek-ai/dsh-session'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { execTool, textOf } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import type { ShellRegistry } from '../src/shells/registry.ts'
import { marker, pidsWithMarker, until } from './harness.ts'
import { bootWorld, namespacesUnavailable, type WorldHost } from './world-rig.ts'

const unavailable = namespacesUnavailable()
if (unavailable !== undefined) console.warn(`world.spec: skipped — ${unavailable}`)

let host: WorldHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

interface Bg { shell_id: string, pid: number, output_file: string, job_id?: string, world?: string, world_limits?: string, wait?: string }

/** The world, bash_bg and kill_shell, the host's job tools and /tasks; `f` reads differently on the host and in the world. */
async function boot(killShell: Partial<KillShell.Config> = {}): Promise<WorldHost> {
  const world = await bootWorld({
    before: async (ctx) => {
      await ctx.plugin(CommandRuntime)
      await ctx.plugin(ToolJobs, { completionDelivery: 'quiet' })
      await ctx.plugin(BashBg, {})
      await ctx.plugin(KillShell, killShell)
    },
  })
  writeFileSync(join(world.paths.workspace, 'f'), 'on the host\n')
  writeFileSync(join(world.paths.worldDir, 'f'), 'in the world\n')
  return world
}

const shellsOf = (world: WorldHost) => world.ctx.get('backgroundShells') as ShellRegistry

describe.skipIf(unavailable !== undefined)('bash_bg in another execution world (a ctx.subprocess in its own mount namespace)', () => {
  it('runs a foreground command in the world: it reads the world\'s files and its writes land there, not on the host', async () => {
    host = await boot()
    const result = await execTool(host.ctx, 'bash_bg', { command: 'cat f; echo made > out; pwd' }, { agent: host.agent() })
    expect(result.isError).toBe(false)
    expect(result.value).toMatchObject({ kind: 'foreground', exit_code: 0, world: 'subprocess', stdout: { text: `in the world\n${host.paths.workspace}\n`, cut: 0 } })
    expect(readFileSync(join(host.paths.worldDir, 'out'), 'utf8')).toBe('made\n')
    expect(existsSync(join(host.paths.workspace, 'out'))).toBe(false)
  })

  it('keeps the tail of a big foreground output and counts exactly what was cut', async () => {
    host = await boot()
    const result = await execTool(host.ctx, 'bash_bg', { command: 'seq 1 100000' }, { agent: host.agent() })
    const { stdout } = result.value as unknown as { stdout: { text: string, cut: number } }
    const whole = Array.from({ length: 100000 }, (_, i) => `${i + 1}\n`).join('')
    expect(stdout.cut).toBeGreaterThan(0)
    expect(stdout.cut + Buffer.byteLength(stdout.text)).toBe(Buffer.byteLength(whole))
    expect(whole.endsWith(stdout.text)).toBe(true)
  })

  it('checks the working directory in the world: one that exists only on the host is refused and nothing runs', async () => {
    host = await boot()
    mkdirSync(join(host.paths.workspace, 'host-only'))
    const agent = host.ctx.agentLoop.create(SessionId('w-cwd'), { provider: 'mock', model: 'mock' }, { cwd: join(host.paths.workspace, 'host-only') })
    const result = await execTool(host.ctx, 'bash_bg', { command: 'touch made' }, { agent })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('no longer exists')
    expect(existsSync(join(host.paths.workspace, 'host-only', 'made'))).toBe(false)
  })

  it('stops a foreground command at its timeout with the seam\'s stop, says what that world cannot promise, and leaves nothing running', async () => {
    host = await boot()
    const mark = marker('worldfg')
    const result = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM; exec -a ${mark} sleep 60`, timeout: 300 }, { agent: host.agent() })
    expect(result.value).toMatchObject({ kind: 'foreground', timed_out: true, signal: 'SIGKILL', world: 'subprocess' })
    expect(textOf(result)).toContain('[timed out after 300ms]')
    expect(textOf(result)).toContain('whatever signal is asked')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('an abort stops a foreground command in the world and reports the abort', async () => {
    host = await boot()
    const mark = marker('worldabort')
    const controller = new AbortController()
    const pending = execTool(host.ctx, 'bash_bg', { command: `exec -a ${mark} sleep 60` }, { agent: host.agent(), signal: controller.signal })
    await until(() => pidsWithMarker(mark, true).length === 1, 'the world\'s sleep')
    controller.abort()
    const result = await pending
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('aborted')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('stops what a foreground command left running in the world', async () => {
    host = await boot()
    const mark = marker('worldleft')
    const result = await execTool(host.ctx, 'bash_bg', { command: `(exec -a ${mark} sleep 60) > /dev/null 2>&1 & echo started` }, { agent: host.agent() })
    expect(result.value).toMatchObject({ kind: 'foreground', exit_code: 0, leftovers_stopped: 1, stdout: { text: 'started\n' } })
    expect(textOf(result)).toContain('[stopped what this command left running; use run_in_background for servers]')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('runs a background shell in the world: wait_for, the log, /tasks and kill_shell work, and nothing is left running', async () => {
    host = await boot()
    const agent = host.agent()
    const mark = marker('worldbg')
    const started = await execTool(host.ctx, 'bash_bg', {
      command: `cat f; echo bg > bgout; echo warn >&2; echo ready; exec -a ${mark} sleep 60`, run_in_background: true, wait_for: '^ready$',
    }, { agent })
    expect(started.isError).toBe(false)
    const value = started.value as unknown as Bg
    expect(value).toMatchObject({ wait: 'matched', world: 'subprocess' })
    expect(textOf(started)).toContain('whatever signal is asked')
    expect(readFileSync(join(host.paths.worldDir, 'bgout'), 'utf8')).toBe('bg\n')
    expect(existsSync(join(host.paths.workspace, 'bgout'))).toBe(false)
    await until(() => pidsWithMarker(mark, true).length === 1, 'the world\'s sleep')
    const log = readFileSync(value.output_file, 'utf8')
    expect(log).toContain('in the world\n')
    expect(log).toContain('warn\n')
    expect(log).not.toContain('on the host')

    const tasks = await host.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    expect(tasks?.result.kind === 'success' ? tasks.result.text : '').toContain(value.shell_id)

    const kill = await execTool(host.ctx, 'kill_shell', { shell_id: value.shell_id, signal: 'SIGINT' }, { agent })
    expect(kill.isError).toBe(false)
    // Asked for SIGINT; the seam has one stop, and the value and the text say so.
    expect(kill.value).toMatchObject({ success: true, signal_sent: 'SIGTERM', survivors: [] })
    expect(textOf(kill)).toContain('whatever signal is asked')
    const record = await shellsOf(host).settled(value.shell_id)
    expect(record.status).toBe('killed')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('kill_shell on a world shell that ignores SIGTERM: the seam\'s SIGKILL after kill_shell\'s configured grace, whatever force says', async () => {
    host = await boot({ timeoutMs: 300 })
    const agent = host.agent()
    const mark = marker('worldforce')
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM; echo up; exec -a ${mark} sleep 60`, run_in_background: true, wait_for: 'up' }, { agent })
    const value = started.value as unknown as Bg
    await until(() => pidsWithMarker(mark, true).length === 1, 'the world\'s sleep')
    const kill = await execTool(host.ctx, 'kill_shell', { shell_id: value.shell_id, force: false }, { agent })
    expect(kill.value).toMatchObject({ success: true, outcome: 'force-killed', signal_sent: 'SIGTERM', force_killed: true, timeout_ms: 300, survivors: [] })
    expect(textOf(kill)).toContain('then SIGKILL')
    expect(textOf(kill)).toContain('SIGKILL after 300 ms, whatever signal is asked')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('a host job_kill stops a world shell that ignores SIGTERM (the seam escalates to SIGKILL)', async () => {
    host = await boot()
    const agent = host.agent()
    const mark = marker('worldjob')
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM; echo up; exec -a ${mark} sleep 60`, run_in_background: true, wait_for: 'up' }, { agent })
    const value = started.value as unknown as Bg
    expect(value.job_id).toBeDefined()
    await until(() => pidsWithMarker(mark, true).length === 1, 'the world\'s sleep')
    const output = await execTool(host.ctx, 'job_output', { job_id: value.job_id }, { agent })
    expect(textOf(output)).toContain('up\n')
    const kill = await execTool(host.ctx, 'job_kill', { job_id: value.job_id }, { agent })
    expect(kill.isError).toBe(false)
    const snapshot = await host.ctx.jobs.wait(JobId(value.job_id ?? ''), 20_000, agent)
    expect(snapshot).toMatchObject({ status: 'killed' })
    expect((await shellsOf(host).settled(value.shell_id)).status).toBe('killed')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('a 30 MB burst: the log holds it all, or says what the pump missed and where the whole stream is (the spill)', async () => {
    host = await boot()
    const started = await execTool(host.ctx, 'bash_bg', { command: "head -c 30000000 /dev/zero | tr '\\0' a; echo; echo end", run_in_background: true }, { agent: host.agent() })
    const value = started.value as unknown as Bg
    const record = await shellsOf(host).settled(value.shell_id)
    expect(record.status).toBe('completed')
    const log = readFileSync(value.output_file, 'utf8')
    expect(log.endsWith('a\nend\n')).toBe(true)
    // Whether a pump fell behind depends on the machine's speed: either nothing was lost, or the log says so and where all of it is.
    const lost = /\[bash_bg: stdout came faster than it could be logged and some was lost here; the whole stream is in (\S+) in that world\]/.exec(log)
    if (lost === null) expect(Buffer.byteLength(log)).toBe(30000000 + 5)
    else expect(statSync(lost[1] ?? '').size).toBe(30000000 + 5)
  })

  it('disposing the plugin stops every shell it started in the world', async () => {
    host = await boot()
    const mark = marker('worlddispose')
    for (let i = 0; i < 3; i++) {
      await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM; exec -a ${mark} sleep 60`, run_in_background: true }, { agent: host.agent() })
    }
    await until(() => pidsWithMarker(mark, true).length === 3, 'three sleeps in the world')
    await host.dispose()
    host = undefined
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('a shell that ends on its own completes with its exit code and its whole output', async () => {
    host = await boot()
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'seq 1 20000; cat f; exit 3', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    const record = await shellsOf(host).settled(value.shell_id)
    expect(record).toMatchObject({ status: 'completed', exit_code: 3 })
    const log = readFileSync(value.output_file, 'utf8')
    expect(log.startsWith('1\n2\n3\n')).toBe(true)
    expect(log).toContain('\n20000\nin the world\n')
  })
})

describe('a filesystem that is not local with no ctx.subprocess composed', () => {
  it('refuses, naming the reason, and runs nothing — foreground and background', async () => {
    host = await bootWorld({ subprocess: false, before: async (ctx) => { await ctx.plugin(BashBg, {}) } })
    const agent = host.agent()
    for (const args of [{ command: 'touch made' }, { command: 'touch made', run_in_background: true }]) {
      const result = await execTool(host.ctx, 'bash_bg', args, { agent })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('ctx.fs is not local and no ctx.subprocess is composed')
    }
    expect(existsSync(join(host.paths.workspace, 'made'))).toBe(false)
    expect(existsSync(join(host.paths.worldDir, 'made'))).toBe(false)
    expect(shellsOf(host).list(agent)).toEqual([])
  })
})
