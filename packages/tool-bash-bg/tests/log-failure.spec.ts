import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf } from '@gencode-ai/testkit'
import { LocalHost } from '../src/local/host.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import type { KeptFeed } from '../src/local/keeper-client.ts'
import { BackgroundShell } from '../src/shells/shell.ts'
import { ForegroundRuns } from '../src/shells/foreground-runs.ts'
import { localWorld } from '../src/shells/world.ts'
import { bootBashBg, peek, until, type BgHost } from './harness.ts'

const dirs: string[] = []
afterEach(async () => { for (const dir of dirs.splice(0)) await removeTmpDir(dir) })

/** The one injected fault: the keeper's report that its log write failed ENOSPC (as on a full disk), before any output. */
function failWrites(feed: KeptFeed): void {
  feed.stopped('ENOSPC')
}

describe('a log that cannot be written', () => {
  const local = new LocalHost('bash_bg', KILL_POLICY)
  afterAll(() => local.dispose())
  it('stops capture, says why, and the shell ends in status error (job outcome failed)', async () => {
    const dir = await makeTmpDir('bg-fail-')
    dirs.push(dir)
    const shell = await BackgroundShell.start({
      id: 'bg-fail01',
      command: 'sleep 0.2; echo out',
      owner: '',
      launch: { argv: ['bash', '-c', 'sleep 0.2; echo out'], cwd: dir, env: process.env },
      outputFile: join(dir, 'bg-fail01.log'),
      maxLogBytes: 1024,
      world: localWorld(local, new ForegroundRuns('bash_bg')),
      cancelRequest: () => ({ signal: 'SIGTERM', force: true, timeoutMs: 5000 }),
      toolName: 'bash_bg',
    })
    failWrites((shell as unknown as { writer: KeptFeed }).writer)
    const record = await shell.settled
    expect(record.status).toBe('error')
    expect(record.capped).toBe(true)
    expect(record.exit_code).toBe(0)
    expect(shell.outcome()).toEqual({ status: 'failed', detail: 'exit code: 0; log failed (ENOSPC) at 0 bytes' })
  })

  it('a spawn that throws synchronously leaves no log file behind', async () => {
    const dir = await makeTmpDir('bg-fail-')
    dirs.push(dir)
    const outputFile = join(dir, 'bg-fail02.log')
    await expect(BackgroundShell.start({
      id: 'bg-fail02',
      command: 'x',
      owner: '',
      launch: { argv: ['bash', '-c', 'echo \0'], cwd: dir, env: process.env },
      outputFile,
      maxLogBytes: 1024,
      world: localWorld(local, new ForegroundRuns('bash_bg')),
      cancelRequest: () => ({ signal: 'SIGTERM', force: true, timeoutMs: 5000 }),
      toolName: 'bash_bg',
    })).rejects.toThrow(/could not start bash/)
    const { existsSync } = await import('node:fs')
    expect(existsSync(outputFile)).toBe(false)
  })
})

type Bg = { shell_id: string, pid: number, output_file: string, wait?: string, last_lines?: string[], log_problem?: string }

describe('failures that say so (a real host)', () => {
  let host: BgHost | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  const startBg = async (h: BgHost, command: string, extra: object = {}) => {
    const result = await execTool(h.ctx, 'bash_bg', { command, run_in_background: true, ...extra })
    if (result.isError) throw new Error(textOf(result))
    return result.value as unknown as Bg
  }

  it('a removed log directory is re-created (0700) for the next call; the shell whose log went says so', async () => {
    host = await bootBashBg()
    const old = await startBg(host, 'echo before; sleep 30; echo after')
    await until(() => (peek(host, old.shell_id)?.bytes ?? 0) > 0, 'the first line')
    rmSync(host.shells.logDir, { recursive: true, force: true })
    const next = await startBg(host, 'echo again')
    expect((statSync(host.shells.logDir).mode & 0o777).toString(8)).toBe('700')
    await host.shells.settled(next.shell_id)
    expect(readFileSync(next.output_file, 'utf8')).toBe('again\n')
    const record = peek(host, old.shell_id)
    expect(record?.log_problem).toBe('log removed')
    expect(host.shells.liveness(record!)).toMatch(/^running \d+s, log removed, 7 B, last \d+s ago$/)
    // A host job's output read says so once.
    const live = (host.shells as unknown as { shells: Map<string, BackgroundShell> }).shells.get(old.shell_id)
    expect(live?.readOutput(1000)).toBe(`[bash_bg: ${old.output_file} was removed; its output cannot be read]\n`)
    expect(live?.readOutput(1000)).toBe('')
    await host.shells.stop(old.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 5000 }, undefined)
    const ended = await host.shells.settled(old.shell_id)
    expect(ended.log_problem).toBe('log removed')
    expect(host.shells.liveness(ended)).toMatch(/^killed after \d+s, log removed, 7 B/)
  })

  it('a shell whose log is removed and that ends by itself ends in error, and its job outcome says the log went', async () => {
    host = await bootBashBg()
    const quick = await startBg(host, 'echo hi; sleep 0.3')
    unlinkSync(quick.output_file)
    const done = await host.shells.settled(quick.shell_id)
    expect(done.status).toBe('error')
    expect(done.log_problem).toBe('log removed')
    expect(host.shells.liveness(done)).toMatch(/^error after \d+s, log removed, 3 B/)
    const live = (host.shells as unknown as { shells: Map<string, BackgroundShell> }).shells.get(quick.shell_id)
    expect(live?.outcome()).toEqual({ status: 'failed', detail: 'exit code: 0; log removed at 3 bytes' })
  })

  it('a TMPDIR where no log directory can be made fails the load with the same sentence, not a raw errno', async () => {
    const cwd = await makeTmpDir('bg-notmp-')
    dirs.push(cwd)
    const saved = process.env.TMPDIR
    process.env.TMPDIR = '/dev/null/tmp'
    try {
      const outcome = await bootBashBg({}, { cwd }).then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => String(error))
      expect(outcome).toContain('bash_bg: cannot create its log in /dev/null/tmp (ENOTDIR) — nothing was started; ')
    } finally {
      if (saved === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = saved
    }
  })

  it('wait_for ends when the log reaches its cap (no later line can match), not at its timeout', async () => {
    host = await bootBashBg({ maxLogBytes: 1000 })
    const result = await execTool(host.ctx, 'bash_bg', {
      command: "head -c 5000 /dev/zero | tr '\\0' a; echo; echo ready; sleep 30", run_in_background: true, wait_for: 'ready', timeout: 60_000,
    })
    const value = result.value as unknown as Bg
    expect(value.wait).toBe('capped')
    expect(textOf(result)).toContain('The log reached its cap before a line matched wait_for: no later line can match; the shell is still running.')
    expect(peek(host, value.shell_id)?.status).toBe('running')
    const text = textOf(await execTool(host.ctx, 'bash_bg', { command: 'echo x; sleep 30', run_in_background: true, wait_for: 'never', timeout: 300 }))
    expect(text).toContain('No line matched wait_for in 300 ms')
  })

  it('the too-many-shells error cuts each command', async () => {
    host = await bootBashBg({ maxEntries: 3 })
    const long = `sleep 60 # ${'x'.repeat(100_000)}`
    const ids = [await startBg(host, long), await startBg(host, long), await startBg(host, long)].map((value) => value.shell_id)
    const result = await execTool(host.ctx, 'bash_bg', { command: long, run_in_background: true })
    const message = result.error?.message ?? ''
    expect(message.length).toBeLessThan(600)
    for (const id of ids) expect(message).toContain(`${id} (sleep 60 # xxxxxxxxxxxxxxxxxxxxxxxxxxxx…; running`)
  })

  it('a kill right after a quick command exited (leader not yet reaped) is already-exited, not a kill', async () => {
    host = await bootBashBg()
    const shell = await startBg(host, 'exit 0')
    // Block the event loop until the leader is reaped by its keeper (its parent) while this host has not yet heard of
    // its exit, as under load: its pid proves nothing now.
    const sleeper = new Int32Array(new SharedArrayBuffer(4))
    const state = () => { try { const text = readFileSync(`/proc/${shell.pid}/stat`, 'latin1'); return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) } catch { return 'gone' } }
    for (let i = 0; i < 2000 && state() !== 'gone'; i++) Atomics.wait(sleeper, 0, 0, 1)
    expect(state()).toBe('gone')
    const outcome = await host.shells.stop(shell.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 5000 }, undefined)
    expect(outcome.outcome).toBe('already-exited')
    expect(outcome.signal_sent).toBe('none')
    expect(outcome.shell.status).toBe('completed')
    expect(outcome.shell.exit_code).toBe(0)
  })
})

/** Run tests/fixtures/log-host.ts in its own process; its one JSON line. */
async function logHost(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  const child = spawn(argv[0] ?? '', argv.slice(1), { cwd: join(import.meta.dirname, '..'), env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (data: Buffer) => { out += String(data) })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  expect(code, out).toBe(0)
  return JSON.parse(out) as Record<string, unknown>
}

const fixture = [process.execPath, '--import', 'tsx', join(import.meta.dirname, 'fixtures/log-host.ts')]
const setpriv = spawnSync('setpriv', ['--bounding-set', '-dac_override', '--', 'true']).status === 0
const tmpfs = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=1m tmpfs /mnt']).status === 0

describe('log faults in a host process', () => {
  const made: string[] = []
  afterEach(() => { for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true }) })

  // Root writes a 0500 directory anyway: the host runs without CAP_DAC_OVERRIDE, as an ordinary user would.
  it.skipIf(!setpriv)('an unwritable log directory refuses with one sentence naming it, and works again once writable (skipped where setpriv is missing)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'bg-unwritable-'))
    made.push(tmp)
    const drop = '-dac_override,-dac_read_search'
    const result = await logHost(['setpriv', '--bounding-set', drop, '--inh-caps', drop, '--', ...fixture, 'unwritable'], { TMPDIR: tmp })
    const refused = result.refused as { isError: boolean, text: string }
    expect(refused.isError).toBe(true)
    expect(refused.text).toMatch(new RegExp(`^Error: bash_bg: cannot create its log in ${tmp}/dsh-bash-bg-\\d+/host-\\w+ \\(EACCES\\) — nothing was started; `))
    expect((result.after as { isError: boolean }).isError).toBe(false)
  })

  it.skipIf(!tmpfs)('a full log disk ends wait_for at once with the write error; the record and /tasks say so (skipped where unshare -rm cannot mount a tmpfs)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'bg-full-'))
    made.push(tmp)
    const mountThenRun = 'mount -t tmpfs -o size=1m tmpfs "$TMPDIR" && exec "$@"'
    const result = await logHost(['unshare', '-rm', 'sh', '-c', mountThenRun, 'sh', ...fixture, 'full'], { TMPDIR: tmp })
    const waited = result.waited as { value: { wait: string, log_problem: string, last_lines: string[] }, text: string }
    expect(waited.value.wait).toBe('log-failed')
    expect(waited.value.log_problem).toBe('log failed (ENOSPC)')
    expect(waited.text).toContain('The log failed (ENOSPC) before a line matched wait_for: no later line can match; the shell is still running.')
    expect(waited.value.last_lines.at(-1)?.length).toBeLessThanOrEqual(301)
    expect(result.liveness).toMatch(/^running \d+s, log failed \(ENOSPC\), /)
    expect(result.tasks).toContain('log failed (ENOSPC),')
  })
})
