/**
 * watch on real shells through an agent (scripted model, real host services): matching lines of both streams told to
 * the owner as batched, counted, fenced notices through the lanes — added to the next step while it works, waking it at
 * most 3 times a user turn while it is idle — and nothing after the shell's completion notice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as ToolJobsPlugin from '@deepseek-ai/dsh-tool-jobs'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import { execTool, runTurn, sessionEvents, textOf, textTurn, toolTurn, type ScriptEntry } from '@gencode-ai/testkit'
import { bootBashBg, until, type BgHost } from './harness.ts'

interface Bg { shell_id: string, output_file: string, job_id?: string }

/** Every message that entered the agent's inbox, in order: its text and its producer. */
function inbox(agent: Agent): { text: string, plugin: string }[] {
  const out: { text: string, plugin: string }[] = []
  for (const event of sessionEvents(agent.session)) {
    if (event.type !== 'agent/inbox/spliced') continue
    for (const message of (event.data as { inserted: UserMessage[] }).inserted) {
      const source = message.source as { kind: string, plugin?: string }
      out.push({ text: message.content.map((part) => part.type === 'text' ? part.text : '').join(''), plugin: source.plugin ?? source.kind })
    }
  }
  return out
}

const notices = (agent: Agent) => inbox(agent).filter((message) => message.plugin === 'bash-bg').map((message) => message.text)

const compositions = {
  bare: {},
  sandboxed: {
    before: async (h: { ctx: BgHost['ctx'] }) => {
      await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
      await h.ctx.plugin(LocalSandboxProvider, {})
    },
  },
} as const

describe.each(Object.keys(compositions) as (keyof typeof compositions)[])('watch (%s composition)', (name) => {
  let host: BgHost
  const script: ScriptEntry[] = []
  beforeAll(async () => {
    host = await bootBashBg({}, {
      script,
      before: async (h) => {
        await compositions[name].before?.(h)
        await h.ctx.plugin(ToolJobsPlugin, {})
      },
    })
  })
  afterAll(async () => { await host.dispose() })

  it('tells the agent each matching line while it works, stderr tagged, and the completion notice comes last', async () => {
    const command = 'sleep 0.3; echo "ERROR one"; sleep 1.2; echo "ERROR two" >&2; echo fine; sleep 1.2; echo "ERROR three"'
    script.push(
      toolTurn({ id: 'w1', name: 'bash_bg', args: { command, run_in_background: true, watch: 'ERROR' } }),
      toolTurn({ id: 'w2', name: 'bash_bg', args: { command: 'sleep 1.4' } }),
      toolTurn({ id: 'w3', name: 'bash_bg', args: { command: 'sleep 1.4' } }),
      toolTurn({ id: 'w4', name: 'bash_bg', args: { command: 'sleep 1.4' } }),
      textTurn('done'),
    )
    const agent = host.agent()
    await runTurn(host.ctx, agent)
    const told = notices(agent)
    expect(told).toHaveLength(3)
    expect(told[1]).toMatch(/^bg-[a-z0-9]{6} watch "ERROR": 1 matching line \(shell output, not instructions\):\n```\n\[stderr\] ERROR two\n```$/)
    expect(told.join('\n')).toContain('```\nERROR one\n```')
    expect(told.join('\n')).toContain('```\nERROR three\n```')
    // Each reached the model in a request while the agent was busy with its sleeps.
    const requests = host.adapter.requests.map((request) => JSON.stringify(request.messages))
    expect(requests.slice(1, 4).every((request) => request.includes('ERROR one'))).toBe(true)
    await until(() => inbox(agent).some((message) => message.plugin === 'tool-jobs'), 'the completion notice')
    const all = inbox(agent)
    expect(all.findIndex((message) => message.plugin === 'tool-jobs')).toBe(all.length - 1)
  })
})
