/**
 * Unchanged re-reads through the real agent loop (scripted model): a window the model still has, same file and same
 * bytes, is named instead of shown; every case of doubt gets the full text. The host's own tool-result pruner
 * (dsh-compaction-tool-result-pruner) and a surface replace as compaction lands it decide what the model still sees.
 */
import { execFileSync } from 'node:child_process'
import { statSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import TokenMeter from '@deepseek-ai/dsh-token-meter'
import ToolResultPruner from '@deepseek-ai/dsh-compaction-tool-result-pruner'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import { countTokens, runTurn, sessionEvents, textTurn, toolResults, toolTurn, type Host, type ScriptEntry } from '@gencode-ai/testkit'
import type { Config } from '../src/config.ts'
import { sessionView } from '../src/session/surface.ts'
import { makePdf, readHost } from './harness.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

const BODY = 'alpha\nbeta\ngamma\n'
const FULL = '1\talpha\n2\tbeta\n3\tgamma'
const read = (id: string, args: Record<string, unknown> = {}) => toolTurn({ id, name: 'read_file', args: { file_path: 'a.txt', ...args } })
const unchanged = (id: string, lines = '1-3') => `(Unchanged: lines ${lines} as in call ${id} above.)`

async function start(script: ScriptEntry[], config: Partial<Config> = {}): Promise<Host> {
  host = await readHost(config, { script })
  await writeFile(join(host.cwd, 'a.txt'), BODY)
  return host
}

const texts = (events: Parameters<typeof toolResults>[0]) => toolResults(events).map((result) => result.text)

/** Compaction as the host lands it: one user message replacing the whole surface (compaction-basic's checkpoint). */
function compact(agent: Agent): void {
  const { nodes } = agent.session.surface
  const summary = createUserMessage({ content: [{ type: 'text', text: 'Summary: a.txt was read.' }], source: { kind: 'user' } })
  agent.session.append('user/message', summary, {
    surfaceOp: { op: 'replace', start: nodes[0]!, end: nodes.at(-1)! },
    sourceEventSeqs: [...nodes],
  })
}

describe('a second identical read in a later step', () => {
  it('answers unchanged in under 50 tokens, naming the call; the third identical call gets the full text', async () => {
    const on = await start([read('r1'), read('r2'), read('r3'), read('r4'), textTurn('done')])
    const results = toolResults(await runTurn(on.ctx, on.agent()))
    expect(results.map((result) => result.text)).toEqual([FULL, unchanged('r1'), FULL, unchanged('r3')])
    expect(results.every((result) => !result.isError)).toBe(true)
    expect(countTokens(unchanged('call_00_p3WqTgP4mI2aEWyAmcpW7Tdp', '1-2000'))).toBeLessThanOrEqual(50)
  })

  it('never for another window, even one showing the same lines', async () => {
    const on = await start([read('r1'), read('r2', { offset: 2 }), read('r3', { limit: 3 }), textTurn('done')])
    expect(texts(await runTurn(on.ctx, on.agent()))).toEqual([FULL, '2\tbeta\n3\tgamma', FULL])
  })

  it('answers unchanged for a PDF page window too', async () => {
    const pdf = { file_path: 's.pdf', pages: '2' }
    const on = await start([read('p1', pdf), read('p2', pdf), textTurn('done')])
    await writeFile(join(on.cwd, 's.pdf'), await makePdf(3))
    const [first, second] = texts(await runTurn(on.ctx, on.agent()))
    expect(first).toBe('--- Page 2 ---\nPage 2 text\nsecond line\n\n(Showing pages 2 of 3. Use pages="3" to continue.)')
    expect(second).toBe('(Unchanged: pages 2 as in call p1 above.)')
  })

  it('is off with dedupUnchanged: false', async () => {
    const on = await start([read('r1'), read('r2'), textTurn('done')], { dedupUnchanged: false })
    expect(texts(await runTurn(on.ctx, on.agent()))).toEqual([FULL, FULL])
  })
})

describe('every case of doubt gets the full text', () => {
  it('after an edit that keeps the size and the mtime (touch -r): the content hash differs', async () => {
    let before: { size: number, mtimeMs: number } | undefined
    const on = await start([read('r1'), () => {
      const path = join(on.cwd, 'a.txt')
      execFileSync('cp', ['-p', path, join(on.cwd, 'ref')])
      before = statSync(path)
      writeFileSync(path, BODY.replace('beta', 'BETA'))
      execFileSync('touch', ['-r', join(on.cwd, 'ref'), path])
      return read('r2')
    }, textTurn('done')])
    expect(texts(await runTurn(on.ctx, on.agent()))).toEqual([FULL, '1\talpha\n2\tBETA\n3\tgamma'])
    const after = statSync(join(on.cwd, 'a.txt'))
    expect([after.size, after.mtimeMs]).toEqual([before?.size, before?.mtimeMs])
  })

  it('after cp + mv of the same bytes (another inode, same size and mtime)', async () => {
    let inode = 0
    const on = await start([read('r1'), () => {
      const path = join(on.cwd, 'a.txt')
      inode = statSync(path).ino
      execFileSync('cp', ['-p', path, join(on.cwd, 'copy')])
      execFileSync('mv', [join(on.cwd, 'copy'), path])
      return read('r2')
    }, read('r3'), textTurn('done')])
    expect(texts(await runTurn(on.ctx, on.agent()))).toEqual([FULL, FULL, unchanged('r2')])
    expect(statSync(join(on.cwd, 'a.txt')).ino).not.toBe(inode)
  })

  it('after compaction replaced the earlier result', async () => {
    const on = await start([read('r1'), textTurn('one'), read('r2'), textTurn('two')])
    const agent = on.agent()
    await runTurn(on.ctx, agent)
    compact(agent)
    expect(texts(await runTurn(on.ctx, agent))).toEqual([FULL, FULL])
  })

  it('after the host\'s tool-result pruner cut the earlier result, and not before', async () => {
    const long = Array.from({ length: 40 }, (_, i) => `line ${i + 1} of a file long enough to be pruned`).join('\n')
    const on = await start([read('r1'), textTurn('one'), read('r2'), textTurn('two'), read('r3'), textTurn('three')])
    await writeFile(join(on.cwd, 'a.txt'), long)
    await on.ctx.plugin(TokenMeter)
    await on.ctx.plugin(ToolResultPruner, { thresholdChars: 400, headChars: 100, tailChars: 100 })
    const agent = on.agent()
    await runTurn(on.ctx, agent)
    const pruned = on.ctx.toolResultPruner.pruneSession(agent.session)
    expect(pruned.pruned.map((entry) => String(entry.callId))).toEqual(['r1'])
    await runTurn(on.ctx, agent)
    await runTurn(on.ctx, agent)
    // The log keeps r1 as it was and the pruner's replacement of it (only the latter is on the surface).
    const results = toolResults(sessionEvents(agent.session))
    expect(results.map((result) => result.callId)).toEqual(['r1', 'r1', 'r2', 'r3'])
    const [first, cut, second, third] = results
    expect(first?.text.split('\n')).toHaveLength(40)
    expect(cut?.text).toContain('[... tool result middle pruned ...]')
    expect(second?.text).toBe(first?.text)
    expect(third?.text).toBe(unchanged('r2', '1-40'))
  })

  it('when the earlier read was an error (then, once read, the next identical call is unchanged)', async () => {
    const on = await start([read('r1', { file_path: 'late.txt' }), () => {
      writeFileSync(join(on.cwd, 'late.txt'), BODY)
      return read('r2', { file_path: 'late.txt' })
    }, read('r3', { file_path: 'late.txt' }), textTurn('done')])
    const [failed, succeeded, repeated] = toolResults(await runTurn(on.ctx, on.agent()))
    expect(failed?.isError).toBe(true)
    expect(succeeded).toEqual({ callId: 'r2', isError: false, text: FULL })
    expect(repeated?.text).toBe(unchanged('r2'))
  })

  it('within the same step', async () => {
    const on = await start([
      toolTurn({ id: 'p1', name: 'read_file', args: { file_path: 'a.txt' } }, { id: 'p2', name: 'read_file', args: { file_path: 'a.txt' } }),
      textTurn('done'),
    ])
    expect(texts(await runTurn(on.ctx, on.agent()))).toEqual([FULL, FULL])
  })
})

describe('a resumed session', () => {
  async function resumed(on: Host, seed: ReturnType<typeof sessionEvents>, id: string): Promise<Agent> {
    const handle = await on.ctx.agentLoop.createAgent(on.ctx, {
      sessionId: SessionId(id), seed: JSON.parse(JSON.stringify(seed)) as typeof seed, meta: { cwd: on.cwd }, agentOptions: { provider: 'mock', model: 'mock' },
    })
    return handle.agent
  }

  it('gets the full text for a result no longer on its surface; one still on it may be answered either way', async () => {
    const on = await start([read('r1'), textTurn('one'), read('r2'), textTurn('two'), read('r3'), textTurn('three')])
    const first = on.agent()
    await runTurn(on.ctx, first)
    const kept = sessionEvents(first.session)
    compact(first)
    const gone = await resumed(on, sessionEvents(first.session), 'resumed-gone')
    const [, afterCompaction] = toolResults(await runTurn(on.ctx, gone))
    expect(afterCompaction?.text).toBe(FULL)
    const still = await resumed(on, kept, 'resumed-kept')
    const [, again] = toolResults(await runTurn(on.ctx, still))
    expect([FULL, unchanged('r1')]).toContain(again?.text)
  })
})

describe('a host that cannot tell what the model still sees', () => {
  const call = { type: 'tool/call', seq: 0, time: 0, data: { turn: 1, step: 1, callId: 'c1', name: 'read_file', arguments: '{}' } }

  it('has a step but no earlier results without a surface (every read is full); DSH 0.1.3\'s snapshotEvents() is read too', () => {
    const bare = { agent: { session: { events: [call] } }, rootCallId: 'c1' } as never
    expect(sessionView(bare, 'read_file')).toMatchObject({ step: { turn: 1, step: 1 }, earlier: undefined })
    const later = { agent: { session: { snapshotEvents: () => [call], surface: { nodes: [] } } }, rootCallId: 'c1' } as never
    expect(sessionView(later, 'read_file')).toMatchObject({ step: { turn: 1, step: 1 }, earlier: [] })
  })

  it('has no step at all without an agent, a log, or its own tool/call under this name', () => {
    expect(sessionView({ rootCallId: 'c1' } as never, 'read_file')).toBeUndefined()
    expect(sessionView({ agent: { session: {} }, rootCallId: 'c1' } as never, 'read_file')).toBeUndefined()
    expect(sessionView({ agent: { session: { events: [call] } }, rootCallId: 'c1' } as never, 'view_file')).toBeUndefined()
  })
})
