import { afterEach, describe, expect, it } from 'vitest'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { bootHost, runTurn, textTurn, toolResults, toolTurn, type Host } from '../src/index.ts'

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
})
