import { afterEach, describe, expect, it } from 'vitest'
import { defineTool } from '@deepseek-ai/dsh-tools'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { bootHost, runTurn, sessionEvents, textTurn, toolResults, toolTurn, type Host } from '../src/index.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

describe('testkit', () => {
  it('drives the real agent loop with a scripted model and records the tool result', async () => {
    host = await bootHost({ script: [toolTurn({ id: 'k1', name: 'echo_cwd', args: {} }), textTurn('done')] })
    host.ctx.tools.register(defineTool({
      name: 'echo_cwd',
      description: 'echo the session cwd',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      async execute(_args, exec) { return exec.agent?.session.header.cwd ?? 'none' },
    }))
    const agent = host.agent()
    const events = await runTurn(host.ctx, agent)
    expect(toolResults(events)).toEqual([{ callId: 'k1', isError: false, text: host.cwd }])
    expect(host.adapter.requests).toHaveLength(2)
  })

  it('reads the session log on rc.8 (events) and on 0.1.3+ (snapshotEvents, no events getter)', async () => {
    host = await bootHost({ script: [textTurn('done')] })
    const agent = host.agent()
    const events = await runTurn(host.ctx, agent)
    expect(events.map((event) => event.type)).toContain('turn/end')
    expect(events).toEqual([...agent.session.events])
    // Shaped as Session in packages/core/session/src/index.ts at 0.1.7-rc.2: snapshotEvents(fromSeq?, toSeqExclusive?)
    // returns a frozen array, and there is no events getter.
    let calls = 0
    const later = {
      seq: events.length,
      snapshotEvents(): readonly SessionEvent[] {
        calls++
        return Object.freeze([...events])
      },
    }
    const read = sessionEvents(later)
    expect(read).toEqual(events)
    expect(calls).toBe(1)
    read.pop()
    expect(later.snapshotEvents()).toHaveLength(events.length)
  })
})
