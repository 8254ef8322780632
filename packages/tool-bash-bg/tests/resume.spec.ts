/**
 * Resume (issue 29 items 4-6): a host that resumes a persisted session reads its ledger records and tells the model
 * once, in one injected notice on its first turn (no wake), what became of each shell while no host ran: ended (the
 * shell side's exit file), interrupted (gone without one), stopped at the last host's exit. A record of another
 * session or PID namespace is never touched; a forged record (its pid now another process) is never signalled.
 * The records are what an earlier host leaves in the ledger; the sessions are real persisted logs.
 */
import { spawn } from 'node:child_process'
import { existsSync, readlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import { LocalSubprocessRuntime } from '@deepseek-ai/dsh-subprocess-local'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import { bootHost, makeTmpDir, removeTmpDir, runTurn, textTurn, type Host, type ScriptEntry } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { exitFileOf, Ledger, type LedgerRecord } from '../src/local/ledger.ts'
import { marker, pidsWithMarker, until } from './harness.ts'

/** dsh-subprocess-local with its own spawn: bash_bg then runs every command through ctx.subprocess (the other composition). */
class SeamRuntime extends LocalSubprocessRuntime {
  override spawn(spec: SubprocessSpawnSpec) {
    return super.spawn(spec)
  }
}

let home: string
let sessions: string
let ledger: Ledger
const PIDNS = readlinkSync('/proc/self/ns/pid')

beforeAll(async () => {
  home = await makeTmpDir('resume-home-')
  process.env.DSH_HOME = home
  sessions = join(home, 'sessions')
  ledger = new Ledger()
})
afterAll(async () => {
  delete process.env.DSH_HOME
  await removeTmpDir(home)
})

/** A host of the product's shape for these cases: persisted sessions, tool-jobs, bash_bg. */
async function boot(script: ScriptEntry[], seam = false): Promise<Host> {
  const host = await bootHost({ persistence: sessions, script })
  if (seam) await host.ctx.plugin(SeamRuntime)
  await host.ctx.plugin(ToolJobs, {})
  await host.ctx.plugin(BashBg, {})
  return host
}

/** Run 1: a session with one turn of history, persisted, then the host gone. */
async function firstRun(session: string): Promise<void> {
  const host = await boot([textTurn('first run')])
  const agent = host.agent(undefined, session)
  await runTurn(host.ctx, agent, 'start')
  await host.ctx.get('sessions')?.flush(agent.session)
  await host.dispose()
}

async function resume(host: Host, session: string) {
  const { agent } = await host.ctx.agents.resume({ resumeSessionId: SessionId(session), agentOptions: { provider: 'mock', model: 'mock' } })
  return agent
}

const text = (request: GenerateOptions | undefined) => JSON.stringify(request?.messages ?? [])

/** The lines of bash_bg's notices in a request (what the model read of them). */
function noticeLines(request: GenerateOptions | undefined): string[] {
  return (request?.messages ?? [])
    .filter((message) => message.role === 'user' && message.source.kind === 'plugin' && message.source.plugin === 'tool-bash-bg')
    .flatMap((message) => message.content.flatMap((part) => part.type === 'text' ? part.text.split('\n') : []))
}
const about = (lines: string[], shellId: string) => lines.filter((line) => line.startsWith(`${shellId} `))

/** A record as the host that started the shell left it. */
function record(session: string, shellId: string, fields: Partial<LedgerRecord> = {}): LedgerRecord {
  const dir = ledger.dirOf(session)
  return {
    v: 1, shellId, session, command: `job ${shellId}`, cwd: home, pid: 999_999, pidStart: 1, pidns: PIDNS,
    log: join(home, `${shellId}.log`), streams: join(home, `${shellId}.streams`), exitFile: exitFileOf(dir, shellId),
    startedAt: Date.now() - 60_000, state: 'running', keep: true, ttlMs: 1_800_000, ...fields,
  }
}

describe('a resumed session is told once what became of its shells while no host ran', () => {
  const session = 'resume-told'
  const other = 'resume-someone-else'
  const mark = marker('forged')
  let victim: ReturnType<typeof spawn>

  beforeAll(async () => {
    await firstRun(session)
    // A live process of this user whose pid a forged record names, with the wrong start time.
    victim = spawn('bash', ['-c', `exec -a ${mark} sleep 60`], { stdio: 'ignore' })
    await until(() => pidsWithMarker(mark, true).length === 1, 'the victim')
    const endedAt = Date.UTC(2026, 11, 4, 14, 3)
    ledger.write(record(session, 'bg-aaaaaa', { command: 'sleep 3; echo done; exit 7' }))
    writeFileSync(exitFileOf(ledger.dirOf(session), 'bg-aaaaaa'), JSON.stringify({ v: 1, shellId: 'bg-aaaaaa', code: 7, signal: null, leaderExitedAt: endedAt, endedAt, bytes: 5, capped: false }))
    ledger.write(record(session, 'bg-bbbbbb'))
    ledger.write(record(session, 'bg-cccccc', { state: 'stopped-at-exit', endedAt, keep: false }))
    ledger.write(record(session, 'bg-dddddd', { pid: victim.pid ?? 0, pidStart: 1, cgroup: join(home, 'no-such-cgroup') }))
    ledger.write(record(session, 'bg-gggggg', { state: 'killed', signal: 'SIGTERM', exitCode: null, endedAt }))
    ledger.write(record(session, 'bg-ffffff', { pidns: 'pid:[1]', pid: victim.pid ?? 0 }))
    ledger.write(record(other, 'bg-eeeeee', { pid: victim.pid ?? 0 }))
  }, 60_000)
  afterAll(() => { victim.kill('SIGKILL') })

  it('one line per shell in the first request, without a wake; the records of delivered ends go', async () => {
    const host = await boot([textTurn('noted')])
    try {
      const agent = await resume(host, session)
      await runTurn(host.ctx, agent, 'what happened?')
      // One request: the notice rode the user's turn, it did not start one of its own.
      expect(host.adapter.requests).toHaveLength(1)
      const seen = text(host.adapter.requests[0])
      const lines = noticeLines(host.adapter.requests[0])
      expect(lines).toHaveLength(5)
      expect(about(lines, 'bg-aaaaaa')).toHaveLength(1)
      expect(seen).toContain('bg-aaaaaa \\"sleep 3; echo done; exit 7\\" exited with code 7 at 14:03 UTC while no host was running')
      expect(seen).toContain('bg-bbbbbb \\"job bg-bbbbbb\\" was interrupted: it is gone and no exit status was recorded (not completed)')
      expect(seen).toContain('bg-cccccc \\"job bg-cccccc\\" was stopped when the host exited (keepOnExit is false)')
      expect(seen).toContain('bg-dddddd \\"job bg-dddddd\\" was interrupted')
      // Its host saw it end (the record said killed) and did not live to tell it.
      expect(seen).toContain('bg-gggggg \\"job bg-gggggg\\" was killed by SIGTERM at 14:03 UTC; output: ')
      expect(seen).not.toContain('bg-eeeeee')
      expect(seen).not.toContain('bg-ffffff')
      // Delivered and ended: gone from the ledger once the log holds the notice.
      await until(() => ledger.list(session).map((each) => each.shellId).join() === 'bg-ffffff', 'the delivered records to go')
    } finally {
      await host.dispose()
    }
  })

  it('never touches what it cannot prove is the session\'s: the forged pid lives, the foreign records stay', () => {
    expect(pidsWithMarker(mark, true)).toEqual([victim.pid])
    expect(ledger.read(other, 'bg-eeeeee')?.state).toBe('running')
    expect(ledger.read(session, 'bg-ffffff')?.state).toBe('running')
    expect(existsSync(exitFileOf(ledger.dirOf(session), 'bg-aaaaaa'))).toBe(false)
  })

  it('a later resume is told nothing again', async () => {
    const host = await boot([textTurn('quiet')])
    try {
      const agent = await resume(host, session)
      await runTurn(host.ctx, agent, 'anything new?')
      // The history holds the one notice of the run before; nothing was added.
      expect(noticeLines(host.adapter.requests.at(-1))).toHaveLength(5)
      expect(about(noticeLines(host.adapter.requests.at(-1)), 'bg-aaaaaa')).toHaveLength(1)
    } finally {
      await host.dispose()
    }
  })
})

describe.each([
  { name: 'the local process layer', seam: false },
  { name: 'ctx.subprocess', seam: true },
])('two hosts resuming one session at once ($name)', ({ seam }) => {
  const session = `resume-race-${String(seam)}`

  beforeAll(async () => {
    await firstRun(session)
    ledger.write(record(session, 'bg-rrrrrr', { command: 'make race' }))
    writeFileSync(exitFileOf(ledger.dirOf(session), 'bg-rrrrrr'), JSON.stringify({ v: 1, shellId: 'bg-rrrrrr', code: 3, signal: null, leaderExitedAt: 1, endedAt: 1, bytes: 0, capped: false }))
  }, 60_000)

  it('one takes the session\'s shells and tells them; the other takes and tells nothing', async () => {
    const hosts = [await boot([textTurn('a')], seam), await boot([textTurn('b')], seam)]
    try {
      const agents = await Promise.all(hosts.map((host) => resume(host, session)))
      for (const [i, host] of hosts.entries()) await runTurn(host.ctx, agents[i] as Parameters<typeof runTurn>[1], 'go')
      const told = hosts.map((host) => noticeLines(host.adapter.requests[0]).filter((line) => line.includes('bg-rrrrrr')).length)
      expect(told.sort((a, b) => a - b)).toEqual([0, 1])
      await until(() => ledger.read(session, 'bg-rrrrrr') === undefined, 'the told record to go')
    } finally {
      for (const host of hosts) await host.dispose()
    }
  })
})

