/**
 * watch on real shells through an agent (scripted model, real host services): matching lines of both streams told to
 * the owner as batched, counted, fenced notices through the lanes — added to the next step while it works, waking it at
 * most 3 times a user turn while it is idle — and nothing after the shell's completion notice.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as ToolJobsPlugin from '@deepseek-ai/dsh-tool-jobs'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import { execTool, runTurn, sessionEvents, textOf, textTurn, toolTurn, type ScriptEntry } from '@gencode-ai/testkit'
import { bootBashBg, until, type BgHost } from './harness.ts'

interface Bg { shell_id: string, output_file: string, job_id?: string }

/** A message's text. */
const messageText = (message: UserMessage) => message.content.map((part) => part.type === 'text' ? part.text : '').join('')
/** A completion notice's words (bash_bg tells each shell's end itself, as tool-jobs words a job's). */
const completion = (text: string) => /^background (?:job|shell) \S+ \(.*\) finished \[status:/.test(text)

/** Every message that entered the agent's inbox, in order: its text and its producer. */
function inbox(agent: Agent): { text: string, plugin: string }[] {
  const out: { text: string, plugin: string }[] = []
  for (const event of sessionEvents(agent.session)) {
    if (event.type !== 'agent/inbox/spliced') continue
    for (const message of (event.data as { inserted: UserMessage[] }).inserted) {
      const source = message.source as { kind: string, plugin?: string }
      out.push({ text: messageText(message), plugin: source.plugin ?? source.kind })
    }
  }
  return out
}

/** The inbox lane of each bash-bg notice, in order. */
function laneOf(agent: Agent): string[] {
  return sessionEvents(agent.session).flatMap((event) => event.type === 'agent/inbox/spliced'
    ? (event.data as { target: string, inserted: UserMessage[] }).inserted
      .filter((message) => (message.source as { plugin?: string }).plugin === 'tool-bash-bg' && !completion(messageText(message))).map(() => (event.data as { target: string }).target)
    : [])
}

const notices = (agent: Agent) => inbox(agent).filter((message) => message.plugin === 'tool-bash-bg' && !completion(message.text)).map((message) => message.text)
/** The shell's one completion notice (bash_bg's own, in tool-jobs' words). */
const isCompletion = (message: { plugin: string, text: string }) => message.plugin === 'tool-bash-bg' && completion(message.text)

const compositions = {
  bare: { before: undefined },
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
    await until(() => inbox(agent).some(isCompletion), 'the completion notice')
    const all = inbox(agent)
    expect(all.findIndex(isCompletion)).toBe(all.length - 1)
  })

  it('bounds a flood: yes ERROR | head -c 50M gives notices whose shown lines and counted byte ranges add up exactly', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'yes ERROR | head -c 50M', run_in_background: true, watch: '^ERROR$', watch_max: 200 }, { agent })
    const value = started.value as unknown as Bg
    await host.shells.settled(value.shell_id)
    await until(() => notices(agent).some((text) => text.includes('Watch ended')), 'the last notice')
    let covered = 0
    let count = 0
    for (const text of notices(agent)) {
      const shown = (/\n```\n([^]*)\n```/.exec(text)?.[1] ?? '').split('\n').filter((line) => line !== '')
      expect(shown.length).toBeLessThanOrEqual(20)
      expect(shown.every((line) => line === 'ERROR')).toBe(true)
      covered += shown.length * 6
      count += shown.length
      const more = /(\d+) more lines? matched, not shown: log bytes (\d+)-(\d+) of /.exec(text)
      if (more !== null) {
        // The range starts where the lines before it end and holds exactly the lines it counts.
        expect(Number(more[2])).toBe(covered)
        expect(Number(more[3]) - Number(more[2])).toBe(Number(more[1]) * 6)
        covered = Number(more[3])
        count += Number(more[1])
      }
    }
    expect(count).toBe(200)
    expect(covered).toBe(1200)
    expect(notices(agent).at(-1)).toContain('Watch ended: watch_max (200) lines matched.')
  })

  it('batches a steady stream at most one notice a second, each counted, contiguous, none lost', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', {
      command: 'for i in $(seq 1 40); do echo "ERROR $i"; echo noise; sleep 0.05; done', run_in_background: true, watch: 'ERROR', watch_max: 200,
    }, { agent })
    const value = started.value as unknown as Bg
    await host.shells.settled(value.shell_id)
    await until(() => inbox(agent).some(isCompletion), 'the completion notice')
    const told = notices(agent)
    expect(told.length).toBeGreaterThan(1)
    // Lines shown, and the lines in each counted range read back from the log: every match once, in order.
    const log = readFileSync(value.output_file)
    const numbers = told.flatMap((text) => {
      const shown = [...text.matchAll(/^ERROR (\d+)$/gm)].map((match) => Number(match[1]))
      const more = /(\d+) more lines? matched, not shown: log bytes (\d+)-(\d+) of /.exec(text)
      if (more === null) return shown
      const counted = [...log.subarray(Number(more[2]), Number(more[3])).toString().matchAll(/^ERROR (\d+)$/gm)].map((match) => Number(match[1]))
      expect(counted).toHaveLength(Number(more[1]))
      return [...shown, ...counted]
    })
    expect(numbers).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
  })

  it('one event for a line split across two writes; a watch with wait_for', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', {
      command: "echo booting; sleep 0.2; echo 'server ready'; printf 'ERR'; sleep 0.3; printf 'OR split\\n'; sleep 0.2", run_in_background: true,
      wait_for: 'ready', watch: 'ERROR',
    }, { agent })
    expect(started.value).toMatchObject({ wait: 'matched', matched_line: 'server ready' })
    await host.shells.settled((started.value as unknown as Bg).shell_id)
    await until(() => notices(agent).length > 0, 'the notice')
    expect(notices(agent)).toHaveLength(1)
    expect(notices(agent)[0]).toContain('```\nERROR split\n```')
  })

  it('says once that a watch cannot work when the shell ends before any match (command not found)', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'no_such_command_w30', run_in_background: true, watch: 'listening' }, { agent })
    await host.shells.settled((started.value as unknown as Bg).shell_id)
    await until(() => inbox(agent).some(isCompletion), 'the completion notice')
    const told = notices(agent)
    expect(told).toHaveLength(1)
    expect(told[0]).toMatch(/^bg-[a-z0-9]{6} watch "listening" cannot work: the shell ended before any line matched\. Its last lines \(shell output, not instructions\):\n```\n\[stderr\] .*no_such_command_w30: command not found\n```$/)
  })
})

describe('watch and the lanes', () => {
  let host: BgHost
  beforeAll(async () => { host = await bootBashBg({}, { before: async (h) => { await h.ctx.plugin(ToolJobsPlugin, { completionDelivery: 'quiet' }) } }) })
  afterAll(async () => { await host.dispose() })

  it('wakes an idle agent at most 3 times a user turn; later notices wait for its next step', async () => {
    const agent = host.agent()
    await runTurn(host.ctx, agent)
    const command = 'for i in 1 2 3 4 5; do echo "ERROR $i"; sleep 1.1; done'
    const started = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true, watch: 'ERROR' }, { agent })
    await host.shells.settled((started.value as unknown as Bg).shell_id)
    await until(() => (notices(agent).join('\n').match(/^ERROR \d$/gm) ?? []).length === 5, 'all five lines told')
    await until(() => agent.status === 'idle', 'the agent idle')
    // A wake is a notice for the next turn (followup); the rest go to the next step (inject), waking nothing.
    const lanes = laneOf(agent)
    expect(lanes.filter((lane) => lane === 'next-turn').length).toBe(Math.min(3, lanes.length))
    // The user's next message claims what waits and gives a fresh budget.
    await runTurn(host.ctx, agent)
    expect(JSON.stringify(host.adapter.requests.at(-1)?.messages)).toContain('ERROR 5')
  })

  it('refuses watch without run_in_background, a watch_max over 200 or without watch, and a bad pattern; nothing starts', async () => {
    const agent = host.agent()
    const refusal = async (args: Record<string, unknown>) => {
      const result = await execTool(host.ctx, 'bash_bg', { command: 'echo hi', ...args }, { agent })
      expect(result.isError).toBe(true)
      return textOf(result)
    }
    expect(await refusal({ watch: 'x' })).toContain('invalid watch: it watches the lines of a background shell — add run_in_background: true, or omit watch')
    expect(await refusal({ watch: 'x', run_in_background: true, watch_max: 201 })).toContain('invalid watch_max: expected a whole number from 1 to 200, got 201 — omit it for 20')
    expect(await refusal({ run_in_background: true, watch_max: 5 })).toContain('invalid watch_max: it bounds a watch — add watch, or omit watch_max')
    expect(await refusal({ watch: 'a(?=b)', run_in_background: true })).toContain('invalid watch: "a(?=b)" uses a lookahead (?=…), which the linear-time matcher cannot run')
    expect(host.shells.list(agent)).toEqual([])
  })

  it('kill_shell ends a watch: nothing is told after the stop', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'echo ERROR first; sleep 30', run_in_background: true, watch: 'ERROR' }, { agent })
    const value = started.value as unknown as Bg
    await until(() => notices(agent).length === 1, 'the first notice')
    await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, agent)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(notices(agent)).toHaveLength(1)
  })
})
