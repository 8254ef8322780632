// A host leaving its keeper, in the orders that lost a kept shell's end. (1) While a message of the keeper is half read:
// Node's disconnect() then never closes the channel (it waits for that message, and drops it as the channel is gone),
// and a keeper that learned of its host's exit only from the channel's close never learned it, never ran its shells'
// TTL and never recorded their ends (keeper.spec's 1 GiB case hung so). (2) A shell ending after its host let it go
// (keepOnExit) but before the host left: the host no longer records its end, and the keeper thought the host did.
// Each order is forced.
import type { ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { KeeperClient } from '../src/local/keeper-client.ts'
import type { ExitRecord } from '../src/local/keeper-protocol.ts'
import { exitFileOf, Ledger, ledgerRoot } from '../src/local/ledger.ts'
import { ProcessCensus } from '../src/local/proc-census.ts'
import { localSyscalls } from '../src/local/syscalls.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import { bootBashBg, marker, membersOf, ownHomeAndTmp, pidsWithMarker, until, type BgHost } from './harness.ts'
import { processReport, shellReport } from './shell-report.ts'

const { tmp } = ownHomeAndTmp('bg-keeper-leave')

/** The host's end of its keeper channel, as Node keeps it (a private field of the child): whether it holds half a message. */
function channelOf(client: KeeperClient): { buffering: boolean } {
  const child = (client as unknown as { child: ChildProcess | undefined }).child
  const handle = child === undefined ? undefined : Object.getOwnPropertySymbols(child)
    .map((symbol) => (child as unknown as Record<symbol, unknown>)[symbol])
    .find((value): value is { buffering: boolean } => typeof value === 'object' && value !== null && 'buffering' in value)
  if (handle === undefined) throw new Error('no keeper channel found on the client\'s child (Node moved it: update channelOf)')
  return handle
}

/** Whether `pid` runs (a zombie does not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'latin1'))
  } catch {
    return false
  }
}

/** A host busy for `ms` (its event loop blocked): the keeper's pieces pile up and the next read ends inside one. */
const busy = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

describe('a host leaving while its channel holds half a keeper message', () => {
  const cleanup: (() => Promise<void> | void)[] = []
  afterEach(async () => {
    for (const each of cleanup.splice(0)) await each()
  })

  it('the keeper hears it leave: the TTL stops the shell, the keeper records the end in the ledger, and exits', async () => {
    const session = `leave-${Math.random().toString(36).slice(2, 10)}`
    // Its own id: the shell's processes are found (and, in a failure, killed) by the mark carrying it.
    const id = `bg-${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
    const ledger = new Ledger(ledgerRoot())
    const census = new ProcessCensus(localSyscalls())
    const client = new KeeperClient('', (pid) => census.startTime(pid))
    const files = {
      log: join(tmp, `${id}.log`), streams: join(tmp, `${id}.streams`), exitFile: exitFileOf(ledger.dirOf(session), id),
      maxLogBytes: 256 * 1024 * 1024, toolName: 'bash_bg',
    }
    // Output in 64 KiB pieces, each a message to the host larger than one read of the channel; then a long sleep that
    // only the TTL ends.
    const handle = await client.spawn({
      id, argv: ['bash', '-c', 'head -c 268435456 /dev/zero; sleep 600'], cwd: tmp, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      marks: [`DSH_BG_SHELL=${id}`], files, ttlMs: 300, ledger: { root: ledger.root, session },
      stop: { graceMs: KILL_POLICY.leftoverGraceMs, afterKillMs: KILL_POLICY.afterKillMs, reapMs: KILL_POLICY.reapMs }, shown: 'bash',
    })
    const keeper = client.pid!
    cleanup.push(() => {
      for (const pid of [...membersOf(id), keeper]) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
    })
    ledger.write({
      v: 1, shellId: id, session, command: 'head', cwd: tmp, pid: handle.leader.pid, pidStart: handle.leader.start, pidns: '',
      log: files.log, streams: files.streams, exitFile: files.exitFile, keeper: { pid: keeper, start: census.startTime(keeper) ?? 0 },
      startedAt: Date.now(), state: 'running', keep: true, ttlMs: 300,
    })
    const channel = channelOf(client)
    let tries = 0
    while (!channel.buffering) {
      if (++tries > 500) throw new Error(`the host's channel never held half a message in ${tries} reads; log at ${handle.feed.bytes} bytes`)
      busy(20)
      await new Promise((resolve) => setImmediate(resolve))
    }
    client.disconnect()
    await until(() => new Ledger(ledgerRoot()).read(session, id)?.state !== 'running', 'the keeper to record the end', 60_000, () => shellReport(session, id))
    expect(new Ledger(ledgerRoot()).read(session, id)).toMatchObject({ state: 'killed' })
    expect(JSON.parse(readFileSync(files.exitFile, 'utf8')) as ExitRecord).toMatchObject({ shellId: id, ttlKilled: true })
    expect(membersOf(id)).toEqual([])
    await until(() => !alive(keeper), 'the keeper to exit', 20_000, () => processReport(keeper))
  }, 120_000)

  it('a spawn the keeper has not answered when its host leaves fails at once (SPAWN_FAILED), and what the keeper still starts its TTL stops', async () => {
    const session = `pending-${Math.random().toString(36).slice(2, 10)}`
    const ledger = new Ledger(ledgerRoot())
    const census = new ProcessCensus(localSyscalls())
    const client = new KeeperClient('', (pid) => census.startTime(pid))
    const request = (id: string) => ({
      id, argv: ['bash', '-c', 'sleep 600'] as [string, ...string[]], cwd: tmp, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, marks: [`DSH_BG_SHELL=${id}`],
      files: { log: join(tmp, `${id}.log`), streams: join(tmp, `${id}.streams`), exitFile: exitFileOf(ledger.dirOf(session), id), maxLogBytes: 1024, toolName: 'bash_bg' },
      ttlMs: 200, ledger: { root: ledger.root, session }, shown: 'bash',
      stop: { graceMs: KILL_POLICY.leftoverGraceMs, afterKillMs: KILL_POLICY.afterKillMs, reapMs: KILL_POLICY.reapMs },
    })
    const first = `bg-${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
    const second = `bg-${Math.random().toString(36).slice(2, 8).padEnd(6, '0')}`
    await client.spawn(request(first))
    const keeper = client.pid!
    cleanup.push(() => {
      for (const pid of [...membersOf(first), ...membersOf(second), keeper]) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {}
      }
    })
    // The keeper cannot answer: the second spawn waits on it as the host leaves.
    process.kill(keeper, 'SIGSTOP')
    const waiting = client.spawn(request(second))
    client.disconnect()
    const settled = await Promise.race([waiting.then(() => 'resolved', (error: unknown) => error), new Promise((resolve) => setTimeout(resolve, 10_000, 'still pending'))])
    expect(settled).toMatchObject({ code: 'SPAWN_FAILED' })
    process.kill(keeper, 'SIGCONT')
    // Both shells are the keeper's with no host: their TTL ends them, and the keeper then exits.
    await until(() => membersOf(first).length === 0 && membersOf(second).length === 0, 'the TTL to stop both shells', 30_000, () => processReport(keeper))
    await until(() => !alive(keeper), 'the keeper to exit', 20_000, () => processReport(keeper))
  }, 90_000)

  it('a kept shell ending after its host let it go (the exit hook\'s part, the host still running): its keeper records the end', async () => {
    const host: BgHost = await bootBashBg({ keepOnExit: true })
    cleanup.push(() => host.dispose())
    const session = `letgo-${Math.random().toString(36).slice(2, 10)}`
    const mark = marker('letgo')
    const result = await execTool(host.ctx, 'bash_bg', { command: `exec -a ${mark} sleep 600`, run_in_background: true }, { agent: host.agent(undefined, session) })
    if (result.isError) throw new Error(textOf(result))
    const shell = result.value as { shell_id: string, pid: number }
    const ledger = () => new Ledger(ledgerRoot())
    await until(() => ledger().read(session, shell.shell_id) !== undefined, 'its ledger record')
    const { keep } = host.shells.atExit()
    expect(keep.size).toBe(2)
    // The host, past letting its shells go, records none of their ends; it has not left (a dispose or its exit's end).
    process.kill(-shell.pid, 'SIGKILL')
    await until(() => pidsWithMarker(mark, true).length === 0, 'the shell to die')
    await until(() => ledger().read(session, shell.shell_id)?.state !== 'running', 'its keeper to record the end', 30_000, () => shellReport(session, shell.shell_id))
    expect(ledger().read(session, shell.shell_id)).toMatchObject({ state: 'killed', signal: 'SIGKILL', exitCode: null })
  }, 60_000)
})
