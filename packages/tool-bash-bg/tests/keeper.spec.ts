// Shells that outlive their host (issue 29, items 1-3): the keeper is their parent and writes their logs, so a shell
// keeps running and logging after its host is disposed or SIGKILLed, its cap holds with no host, its exit record has
// its true status, and nothing of it lives past orphanTtlMs. Real hosts, real processes, real files, judged in /proc.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { adoptShell } from '../src/local/keeper-adopt.ts'
import type { ExitRecord } from '../src/local/keeper-protocol.ts'
import { Ledger, ledgerRoot, type LedgerRecord } from '../src/local/ledger.ts'
import { streamRuns } from '../src/local/stream-runs.ts'
import { bootBashBg, marker, ownHomeAndTmp, pidsWithMarker, until, type BgHost } from './harness.ts'
import { shellReport } from './shell-report.ts'

type Bg = { shell_id: string, pid: number, output_file: string }

// A ledger and a TMPDIR of this file's own: hosts other files boot meanwhile must not reap (or see) these shells.
const { tmp } = ownHomeAndTmp('bg-keeper')

const ledger = () => new Ledger(ledgerRoot())
const session = (label: string) => `${label}-${Math.random().toString(36).slice(2, 10)}`
const alive = (pid: number) => {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0]
    return state !== undefined && state !== 'Z'
  } catch {
    return false
  }
}
const exitRecord = (record: LedgerRecord): ExitRecord | undefined => {
  try {
    return JSON.parse(readFileSync(record.exitFile, 'utf8')) as ExitRecord
  } catch {
    return undefined
  }
}
const size = (file: string) => {
  try {
    return statSync(file).size
  } catch {
    return -1
  }
}

describe('a shell outlives its host', () => {
  let host: BgHost | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  const start = async (h: BgHost, id: string, command: string): Promise<Bg> => {
    const result = await execTool(h.ctx, 'bash_bg', { command, run_in_background: true }, { agent: h.agent(undefined, id) })
    if (result.isError) throw new Error(textOf(result))
    await until(() => ledger().read(id, (result.value as Bg).shell_id) !== undefined, 'its ledger record')
    return result.value as Bg
  }

  it('keepOnExit: it keeps running and logging after the host is disposed, then its TTL stops it with no host, and nothing of it is left', async () => {
    host = await bootBashBg({ keepOnExit: true, orphanTtlMs: 3000 })
    const id = session('keep')
    const mark = marker('keep')
    const shell = await start(host, id, `while true; do echo tick; echo tock >&2; sleep 0.1; done & exec -a ${mark} sleep 600`)
    const before = ledger().read(id, shell.shell_id)
    expect(before).toMatchObject({ v: 1, session: id, shellId: shell.shell_id, state: 'running', keep: true, ttlMs: 3000, pid: shell.pid, log: shell.output_file })
    expect(before?.keeper?.pid).toBeGreaterThan(0)
    await host.dispose()
    host = undefined
    // The host is gone: the shell and its writer go on, and the log grows.
    expect(pidsWithMarker(mark, true)).toHaveLength(1)
    const grown = size(shell.output_file)
    await until(() => size(shell.output_file) > grown + 20, 'the log to grow with no host')
    const kept = ledger().read(id, shell.shell_id)
    expect(kept?.state).toBe('running')
    expect(kept?.hostExitedAt).toBeGreaterThan(0)
    // The TTL, counted from the host's exit: the keeper stops the whole shell, records it and exits.
    await until(() => pidsWithMarker(mark, true).length === 0, 'the TTL to stop the shell', 30_000, () => shellReport(id, shell.shell_id))
    await until(() => ledger().read(id, shell.shell_id)?.state === 'killed', 'the ledger to say killed', undefined, () => shellReport(id, shell.shell_id))
    const end = exitRecord(kept!)
    expect(end).toMatchObject({ shellId: shell.shell_id, ttlKilled: true })
    await until(() => !alive(kept!.keeper!.pid), 'the keeper to exit')
    expect(readFileSync(shell.output_file, 'utf8')).toMatch(/^(tick\ntock\n)+/)
  }, 60_000)

  it('keepOnExit false (the default): a dispose stops the shell, nothing is left running, and the record says stopped-at-exit', async () => {
    host = await bootBashBg()
    const id = session('stop')
    const mark = marker('stop')
    const shell = await start(host, id, `exec -a ${mark} sleep 600`)
    const record = ledger().read(id, shell.shell_id)
    expect(record).toMatchObject({ state: 'running', keep: false })
    await host.dispose()
    host = undefined
    expect(pidsWithMarker(mark, true)).toEqual([])
    expect(ledger().read(id, shell.shell_id)).toMatchObject({ state: 'stopped-at-exit', signal: 'SIGTERM' })
    await until(() => !alive(record!.keeper!.pid), 'the keeper to exit')
    expect(existsSync(shell.output_file)).toBe(false)
  })

  /** A host in a child process that starts `command` for session `id` (and `unowned` with no agent), then is SIGKILLed. */
  const crashedHost = async (id: string, command: string, unowned?: string): Promise<{ value: Bg, unowned?: Bg }> => {
    const fixture = [join(import.meta.dirname, 'fixtures/keep-host.ts'), '{}', id, command, ...unowned === undefined ? [] : [unowned]]
    const child = spawn(process.execPath, ['--import', 'tsx', ...fixture], { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (data: Buffer) => { out += String(data) })
    await until(() => out.includes('\n'), 'the host to start the shell', 30_000)
    const started = JSON.parse(out) as { value: Bg, unowned?: Bg }
    await until(() => ledger().read(id, started.value.shell_id) !== undefined, 'its ledger record')
    // Past the crash record's save (200 ms after a start), which names the shells the keeper keeps.
    await new Promise((resolve) => setTimeout(resolve, 500))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    return started
  }

  it('a host that dies by SIGKILL: the shell runs on, ends while no host runs, and its exit record and ledger have its true code', async () => {
    const id = session('crash')
    const mark = marker('crash')
    const { value } = await crashedHost(id, `echo started; (exec -a ${mark} sleep 3); echo done >&2; exit 7`)
    // Crashed with the default config: the shell is kept (its session may take it back), and ends by itself.
    expect(pidsWithMarker(mark, true)).toHaveLength(1)
    await until(() => ledger().read(id, value.shell_id)?.state === 'ended', 'the shell to end while no host runs', 30_000, () => shellReport(id, value.shell_id))
    const record = ledger().read(id, value.shell_id)!
    expect(record).toMatchObject({ state: 'ended', exitCode: 7, signal: null })
    expect(exitRecord(record)).toMatchObject({ shellId: value.shell_id, code: 7, signal: null, capped: false })
    expect(readFileSync(value.output_file, 'utf8')).toBe('started\ndone\n')
    // The stream of each byte: the sidecar holds the stderr line.
    expect(streamRuns(record.streams, 0, 13)).toEqual([{ start: 0, end: 8, stream: 'stdout' }, { start: 8, end: 13, stream: 'stderr' }])
    await until(() => !alive(record.keeper!.pid), 'the keeper to exit')
  }, 60_000)

  it('a crashed host\'s kept shell is not reaped by the next host while its keeper lives; its shell with no session is', async () => {
    const id = session('reap')
    const kept = marker('kept')
    const loose = marker('loose')
    await crashedHost(id, `exec -a ${kept} sleep 600`, `exec -a ${loose} sleep 600`)
    expect(pidsWithMarker(kept, true)).toHaveLength(1)
    expect(pidsWithMarker(loose, true)).toHaveLength(1)
    host = await bootBashBg()
    await until(() => pidsWithMarker(loose, true).length === 0, 'the next host to stop the shell no session can take back')
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(pidsWithMarker(kept, true)).toHaveLength(1)
    // Its keeper still guards it: the TTL (30 min here) is its end; the test ends it by the keeper's own path.
    const record = ledger().read(id, (ledger().list(id)[0] ?? { shellId: '' }).shellId)!
    process.kill(-record.pid, 'SIGKILL')
    await until(() => ledger().read(id, record.shellId)?.state === 'killed', 'the keeper to record the end', undefined, () => shellReport(id, record.shellId))
  }, 60_000)

  it('a keeper killed under a running host: its shells are still stopped by kill_shell\'s path, and the next shell gets a new keeper', async () => {
    host = await bootBashBg()
    const id = session('lost')
    const mark = marker('lost')
    const shell = await start(host, id, `exec -a ${mark} sleep 600`)
    const keeper = ledger().read(id, shell.shell_id)!.keeper!.pid
    process.kill(keeper, 'SIGKILL')
    await until(() => !alive(keeper), 'the keeper to die')
    const stopped = await host.shells.stop(shell.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 5000 }, { id })
    expect(stopped.survivors).toEqual([])
    expect(pidsWithMarker(mark, true)).toEqual([])
    const other = session('lost')
    const next = await start(host, other, 'echo again')
    await host.shells.settled(next.shell_id)
    expect(readFileSync(next.output_file, 'utf8')).toBe('again\n')
    expect(ledger().read(other, next.shell_id)?.keeper?.pid).not.toBe(keeper)
  }, 60_000)

  it('the cap holds while no host runs: a 1 GiB writer survives the host\'s exit (no EPIPE) and its log is exact up to the cap', async () => {
    const cap = 1024 * 1024
    host = await bootBashBg({ keepOnExit: true, maxLogBytes: cap })
    const id = session('gib')
    const shell = await start(host, id, "head -c 1073741824 /dev/zero | tr '\\0' a; echo end >&2")
    await host.dispose()
    host = undefined
    await until(() => ledger().read(id, shell.shell_id)?.state !== 'running', 'the writer to finish with no host', 300_000, () => shellReport(id, shell.shell_id))
    const record = ledger().read(id, shell.shell_id)!
    // tr's status: 0, not a SIGPIPE death (141): its pipe was drained to the end.
    expect(record).toMatchObject({ state: 'ended', exitCode: 0 })
    expect(exitRecord(record)).toMatchObject({ capped: true, bytes: cap })
    const capMarker = `\n[bash_bg: log capped at ${cap} bytes; later output was discarded]\n`
    const log = readFileSync(shell.output_file, 'latin1')
    expect(log.length).toBe(cap)
    expect(log).toBe('a'.repeat(cap - capMarker.length) + capMarker)
  }, 360_000)

  it('a host that leaves while its keeper sends output (the channel closed before the keeper hears it): the keeper and the shell go on', async () => {
    host = await bootBashBg({ keepOnExit: true, maxLogBytes: 64 * 1024 * 1024 })
    const id = session('leaving')
    const chunks = 300
    const shell = await start(host, id, `for i in $(seq ${chunks}); do head -c 65536 /dev/zero | tr '\\0' b; sleep 0.002; done; echo end >&2`)
    // Output flows (one message to the host per piece) as the host closes the channel.
    await until(() => size(shell.output_file) > 1024 * 1024, 'output to flow')
    await host.dispose()
    host = undefined
    await until(() => ledger().read(id, shell.shell_id)?.state !== 'running', 'the writer to finish with no host', 120_000, () => shellReport(id, shell.shell_id))
    expect(ledger().read(id, shell.shell_id)).toMatchObject({ state: 'ended', exitCode: 0 })
    expect(size(shell.output_file)).toBe(chunks * 65536 + 'end\n'.length)
  }, 180_000)

  it('at host exit (the exit hook\'s part, without exiting): kept shells keep their files and note the exit; otherwise they are targets and stopped-at-exit', async () => {
    for (const keepOnExit of [true, false]) {
      host = await bootBashBg({ keepOnExit })
      const id = session('atexit')
      const shell = await start(host, id, 'sleep 600')
      const { targets, keep } = host.shells.atExit()
      const record = ledger().read(id, shell.shell_id)
      if (keepOnExit) {
        expect([...keep].sort()).toEqual([`${shell.shell_id}.log`, `${shell.shell_id}.streams`])
        expect(targets).toEqual([])
        expect(record).toMatchObject({ state: 'running', keep: true })
        expect(record?.hostExitedAt).toBeGreaterThan(0)
      } else {
        expect(keep.size).toBe(0)
        expect(targets).toHaveLength(1)
        expect(record).toMatchObject({ state: 'stopped-at-exit' })
      }
      await host.dispose()
      host = undefined
      if (keepOnExit) process.kill(-shell.pid, 'SIGKILL')
    }
  })

  it('sidecar: the stream of interleaved stdout and stderr writes is recoverable for any byte range', async () => {
    host = await bootBashBg()
    const id = session('streams')
    const shell = await start(host, id, 'for i in 1 2 3; do echo out$i; sleep 0.05; echo err$i >&2; sleep 0.05; done; printf x')
    await host.shells.settled(shell.shell_id)
    await until(() => ledger().read(id, shell.shell_id)?.state === 'ended', 'the ledger to record the end', undefined, () => shellReport(id, shell.shell_id))
    const log = readFileSync(shell.output_file, 'utf8')
    expect(log).toBe('out1\nerr1\nout2\nerr2\nout3\nerr3\nx')
    const record = ledger().read(id, shell.shell_id)!
    const runs = streamRuns(record.streams, 0, log.length)
    expect(runs.map((run) => `${run.stream}:${log.slice(run.start, run.end)}`)).toEqual([
      'stdout:out1\n', 'stderr:err1\n', 'stdout:out2\n', 'stderr:err2\n', 'stdout:out3\n', 'stderr:err3\n', 'stdout:x',
    ])
    // A range starting inside a run is cut at the range.
    expect(streamRuns(record.streams, 7, 12)).toEqual([{ start: 7, end: 10, stream: 'stderr' }, { start: 10, end: 12, stream: 'stdout' }])
    expect(ledger().read(id, shell.shell_id)).toMatchObject({ state: 'ended', exitCode: 0 })
  })

  it('a host takes a shell back over the keeper\'s socket: no TTL runs while it holds it, and the TTL starts again when it lets go', async () => {
    host = await bootBashBg({ keepOnExit: true, orphanTtlMs: 1500 })
    const id = session('adopt')
    const mark = marker('adopt')
    const shell = await start(host, id, `exec -a ${mark} sleep 600`)
    const record = ledger().read(id, shell.shell_id)!
    const socket = record.keeper?.socket
    expect(socket).toBeDefined()
    await host.dispose()
    host = undefined
    const adopted = await adoptShell(socket!, shell.shell_id)
    expect(adopted).toMatchObject({ pid: shell.pid, start: record.pidStart })
    expect(await adoptShell(socket!, 'bg-zzzzzz')).toBeUndefined()
    expect(await adoptShell(join(tmp, 'no-keeper'), shell.shell_id)).toBeUndefined()
    // Twice the TTL held: still running.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    expect(pidsWithMarker(mark, true)).toHaveLength(1)
    adopted!.release()
    await until(() => pidsWithMarker(mark, true).length === 0, 'the TTL to run again once let go', 30_000, () => shellReport(id, shell.shell_id))
    await until(() => ledger().read(id, shell.shell_id)?.state === 'killed', 'the ledger to say killed', undefined, () => shellReport(id, shell.shell_id))
  }, 60_000)

  it('a forged record (a live process\'s pid with a wrong start time) is never signalled, by a host or its keeper', async () => {
    const mark = marker('forged')
    const bystander = spawn('bash', ['-c', `exec -a ${mark} sleep 600`], { stdio: 'ignore', detached: true })
    try {
      await until(() => pidsWithMarker(mark, true).length === 1, 'the bystander')
      const id = session('forged')
      ledger().write({
        v: 1, shellId: 'bg-forged', session: id, command: 'sleep 600', cwd: '/', pid: bystander.pid!, pidStart: 1, pidns: '',
        log: '/dev/null', streams: '/dev/null', exitFile: '/dev/null', startedAt: 1, state: 'running', keep: true, ttlMs: 1,
        keeper: { pid: bystander.pid!, start: 1 },
      })
      for (const keepOnExit of [true, false]) {
        host = await bootBashBg({ keepOnExit, orphanTtlMs: 500 })
        await start(host, id, 'true')
        await host.dispose()
        host = undefined
      }
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(pidsWithMarker(mark, true)).toEqual([bystander.pid])
    } finally {
      bystander.kill('SIGKILL')
    }
  }, 60_000)
})
