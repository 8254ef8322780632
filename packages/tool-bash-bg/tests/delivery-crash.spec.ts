/**
 * Exactly once across a crash at the delivery instant (issue 29 item 5): a host SIGKILLed right after the completion
 * notice's `user/message` was durably logged, before its ledger record said delivered, leaves a session whose next
 * resume sends nothing more; one SIGKILLed after the record said delivering, before the notice was handed over,
 * leaves one whose next resume sends it once; one SIGKILLed with a resume notice durable in the idle agent's inbox,
 * not yet claimed, leaves it to be claimed by the next turn, not sent again. Real processes, a real persisted
 * session, the real ledger.
 */
import { spawn } from 'node:child_process'
import { readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { SessionId } from '@deepseek-ai/dsh-session'
import { bootHost, makeTmpDir, removeTmpDir, runTurn, sessionEvents, textTurn } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { exitFileOf, Ledger } from '../src/local/ledger.ts'
import { until } from './harness.ts'

let home: string

beforeAll(async () => {
  home = await makeTmpDir('crash-home-')
  process.env.DSH_HOME = home
})
afterAll(async () => {
  delete process.env.DSH_HOME
  await removeTmpDir(home)
})

/** Run 1 in its own process, killed by itself at `phase`: the shell id it printed, and how it ended. */
async function crashAt(phase: 'delivering' | 'logged' | 'pending', session: string): Promise<{ shellId: string, signal: string | null }> {
  const fixture = join(import.meta.dirname, 'fixtures/delivery-host.ts')
  const child = spawn(process.execPath, ['--conditions', 'source', '--import', 'tsx', fixture, phase, join(home, 'sessions'), session], {
    cwd: join(import.meta.dirname, '..'), env: { ...process.env, DSH_HOME: home }, stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (data: Buffer) => { out += String(data) })
  const signal = await new Promise<string | null>((resolve) => child.once('exit', (_code, killed) => resolve(killed)))
  return { shellId: out.trim().split('\n')[0] ?? '', signal }
}

/** Run 2: resume the session, one user turn; the bash_bg notices about `shellId` in the session it leaves. */
type Counted = { told: number, requests: number, others?: number }
async function resumeAndCount(session: string, shellId: string, other?: string): Promise<Counted> {
  const host = await bootHost({ persistence: join(home, 'sessions'), script: [textTurn('resumed')] })
  try {
    await host.ctx.plugin(ToolJobs, {})
    await host.ctx.plugin(BashBg, {})
    const { agent } = await host.ctx.agents.resume({ resumeSessionId: SessionId(session), agentOptions: { provider: 'mock', model: 'mock' } })
    await runTurn(host.ctx, agent, 'next')
    const told = (id: string) => sessionEvents(agent.session).flatMap((event) => event.type === 'user/message' ? [event.data] : [])
      .filter((message) => message.source.kind === 'plugin' && message.source.plugin === 'tool-bash-bg'
        && message.content.some((part) => part.type === 'text' && part.text.includes(id))).length
    // The record goes once its notice is logged and flushed.
    await until(() => new Ledger().read(session, shellId) === undefined, 'the delivered record to go')
    return { told: told(shellId), requests: host.adapter.requests.length, ...other === undefined ? {} : { others: told(other) } }
  } finally {
    await host.dispose()
  }
}

describe('a host SIGKILLed at the delivery instant', () => {
  it('after the notice was logged, before the ledger said delivered: the next resume sends nothing', async () => {
    const run1 = await crashAt('logged', 'crash-logged')
    expect(run1.signal).toBe('SIGKILL')
    expect(new Ledger().read('crash-logged', run1.shellId)?.delivery?.state).toBe('delivering')
    expect(await resumeAndCount('crash-logged', run1.shellId)).toEqual({ told: 1, requests: 1 })
  }, 60_000)

  it('after the ledger said delivering, before the notice was handed over: the next resume sends it once', async () => {
    const run1 = await crashAt('delivering', 'crash-delivering')
    expect(run1.signal).toBe('SIGKILL')
    expect(new Ledger().read('crash-delivering', run1.shellId)?.delivery?.state).toBe('delivering')
    expect(await resumeAndCount('crash-delivering', run1.shellId)).toEqual({ told: 1, requests: 1 })
  }, 60_000)

  it('after a resume notice entered the idle agent\'s inbox, before any turn claimed it: the next resume sends nothing more', async () => {
    const session = 'crash-pending'
    const ledger = new Ledger()
    // Run 1 left a session, and a shell that ended while no host ran.
    const first = await crashAt('logged', session)
    await resumeAndCount(session, first.shellId)
    const seed = (shellId: string) => ({
      v: 1 as const, shellId, session, command: 'make', cwd: home, pid: 999_999, pidStart: 1, pidns: readlinkSync('/proc/self/ns/pid'),
      log: join(home, `${shellId}.log`), streams: '', exitFile: exitFileOf(ledger.dirOf(session), shellId), startedAt: Date.now(),
      state: 'stopped-at-exit' as const, keep: false, ttlMs: 1,
    })
    ledger.write(seed('bg-zzzzzz'))
    const run2 = await crashAt('pending', session)
    expect(run2.signal).toBe('SIGKILL')
    expect(ledger.read(session, 'bg-zzzzzz')?.delivery?.state).toBe('delivering')
    // Meanwhile another shell of the session ended: run 3 tells it, beside the pending notice it leaves alone.
    ledger.write({ ...seed('bg-yyyyyy'), state: 'interrupted' })
    const run3 = await resumeAndCount(session, 'bg-zzzzzz', 'bg-yyyyyy')
    expect(run3).toEqual({ told: 1, requests: 1, others: 1 })
  }, 90_000)
})
