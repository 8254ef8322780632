/**
 * Exactly once across a crash at the delivery instant (issue 29 item 5): a host SIGKILLed right after the completion
 * notice's `user/message` was durably logged, before its ledger record said delivered, leaves a session whose next
 * resume sends nothing more; one SIGKILLed after the record said delivering, before the notice was handed over,
 * leaves one whose next resume sends it once. Real processes, a real persisted session, the real ledger.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { SessionId } from '@deepseek-ai/dsh-session'
import { bootHost, makeTmpDir, removeTmpDir, runTurn, sessionEvents, textTurn } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { Ledger } from '../src/local/ledger.ts'
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
async function crashAt(phase: 'delivering' | 'logged', session: string): Promise<{ shellId: string, signal: string | null }> {
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
async function resumeAndCount(session: string, shellId: string): Promise<{ told: number, requests: number }> {
  const host = await bootHost({ persistence: join(home, 'sessions'), script: [textTurn('resumed')] })
  try {
    await host.ctx.plugin(ToolJobs, {})
    await host.ctx.plugin(BashBg, {})
    const { agent } = await host.ctx.agents.resume({ resumeSessionId: SessionId(session), agentOptions: { provider: 'mock', model: 'mock' } })
    await runTurn(host.ctx, agent, 'next')
    const ours = sessionEvents(agent.session).flatMap((event) => event.type === 'user/message' ? [event.data] : [])
      .filter((message) => message.source.kind === 'plugin' && message.source.plugin === 'tool-bash-bg'
        && message.content.some((part) => part.type === 'text' && part.text.includes(shellId)))
    // The record goes once its notice is logged and flushed.
    await until(() => new Ledger().read(session, shellId) === undefined, 'the delivered record to go')
    return { told: ours.length, requests: host.adapter.requests.length }
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
})
