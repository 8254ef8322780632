/**
 * A foreground command reaching its timeout moves to the background where a jobs controller serves the call: the value
 * keeps the output so far and names the shell, the log holds the whole output from the first byte, the end is told
 * once; it is stopped instead, with the reason, for a bare sleep or a full background limit, and with onTimeout: 'kill'.
 * And job_output: the start text names it, and its reads of a growing log are disjoint pieces of it.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import * as ToolJobsPlugin from '@deepseek-ai/dsh-tool-jobs'
import { JobId } from '@deepseek-ai/dsh-jobs'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { execTool, sessionEvents, textOf } from '@gencode-ai/testkit'
import type { Config } from '../src/config.ts'
import { bootBashBg, marker, membersOf, pidsWithMarker, until, type BgHost } from './harness.ts'

interface Bg { kind: string, shell_id: string, pid: number, output_file: string, job_id?: string }

const withJobs = (config: Partial<Config> = {}) => bootBashBg(config, {
  before: async (h) => {
    await h.ctx.plugin(ToolJobsPlugin, {})
    await h.ctx.plugin(CommandRuntime)
  },
})

/** The host's completion notices that reached the agent's inbox. */
function completions(agent: Agent): string[] {
  return sessionEvents(agent.session).flatMap((event) => event.type === 'agent/inbox/spliced'
    ? (event.data as { inserted: { content: { type: string, text?: string }[] }[] }).inserted.map((message) => message.content[0]?.text ?? '')
      .filter((text) => text.startsWith('background job '))
    : [])
}

describe('timeout → background', () => {
  let host: BgHost
  beforeAll(async () => { host = await withJobs() })
  afterAll(async () => { await host.dispose() })

  it('keeps a command that outgrows its timeout running as a background shell, logged from its first byte, told once', async () => {
    const agent = host.agent()
    const command = "sleep 1; python3 -c 'import time; [print(i, flush=True) or time.sleep(0.2) for i in range(30)]'"
    const result = await execTool(host.ctx, 'bash_bg', { command, timeout: 1500 }, { agent })
    expect(result.isError).toBe(false)
    const value = result.value as unknown as Bg
    expect(value).toMatchObject({ kind: 'background', job_id: expect.stringMatching(/^bash_bg-\d+$/) as string, moved_after_ms: 1500 })
    const text = textOf(result)
    expect(text).toContain(`[timed out after 1500ms: still running as ${value.shell_id} — do not run it again; you will be told when it ends]`)
    expect(text).toContain(`Shell ${value.shell_id} (pid ${value.pid}, job ${value.job_id}). Output file: ${value.output_file}`)
    expect(text).toContain(`Read new output with job_output ${value.job_id}`)
    expect(host.shells.find(value.shell_id, agent)).toMatchObject({ status: 'running', job_id: value.job_id })
    const ended = await host.shells.settled(value.shell_id)
    expect(ended).toMatchObject({ status: 'completed', exit_code: 0 })
    expect(readFileSync(value.output_file, 'utf8')).toBe(Array.from({ length: 30 }, (_, i) => `${i}\n`).join(''))
    // The value kept the output so far: the start of the log, shown before the sentence.
    const soFar = (result.value as unknown as { stdout: { text: string } }).stdout.text
    expect(readFileSync(value.output_file, 'utf8').startsWith(soFar)).toBe(true)
    expect(text.startsWith(soFar)).toBe(true)
    await until(() => completions(agent).length === 1, 'the completion notice')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(completions(agent)).toEqual([expect.stringContaining(`background job ${value.job_id} (bash_bg: ${command}) finished [status: completed, exit code: 0]`)])
  })

  it('kill_shell stops a moved shell with nothing left', async () => {
    const agent = host.agent()
    const mark = marker('moved')
    const result = await execTool(host.ctx, 'bash_bg', { command: `echo begun; (exec -a ${mark} sleep 60) & exec -a ${mark} sleep 61`, timeout: 300 }, { agent })
    const value = result.value as unknown as Bg
    expect(value.kind).toBe('background')
    expect(pidsWithMarker(mark, true)).toHaveLength(2)
    const outcome = await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, agent)
    expect(outcome).toMatchObject({ survivors: [], shell: { status: 'killed' } })
    expect(pidsWithMarker(mark)).toEqual([])
    expect(membersOf(value.shell_id)).toEqual([])
    expect(readFileSync(value.output_file, 'utf8')).toBe('begun\n')
  })

  it('stops a bare sleep at its timeout and says why; a command that ends in time leaves no shell and no log', async () => {
    const agent = host.agent()
    const before = host.shells.list(agent).length
    const logs = readdirSync(host.shells.logDir).length
    const slept = await execTool(host.ctx, 'bash_bg', { command: 'sleep 30', timeout: 300 }, { agent })
    expect(textOf(slept)).toBe('(no output)\n[timed out after 300ms]\n[not moved to the background: a bare sleep only waits; it is stopped]\n[killed by signal: SIGTERM]')
    const quick = await execTool(host.ctx, 'bash_bg', { command: 'echo quick', timeout: 5000 }, { agent })
    expect(textOf(quick)).toBe('quick\n')
    expect(host.shells.list(agent)).toHaveLength(before)
    expect(readdirSync(host.shells.logDir)).toHaveLength(logs)
  })

  it('an aborted call stops a run that could have moved: no shell, no log, nothing left', async () => {
    const agent = host.agent()
    const mark = marker('abortmove')
    const logs = readdirSync(host.shells.logDir).length
    const before = host.shells.list(agent).length
    const controller = new AbortController()
    const call = execTool(host.ctx, 'bash_bg', { command: `exec -a ${mark} sleep 60`, timeout: 30_000 }, { agent, signal: controller.signal })
    await until(() => pidsWithMarker(mark, true).length === 1, 'the process')
    controller.abort()
    const result = await call
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('tool call aborted')
    await until(() => pidsWithMarker(mark).length === 0, 'the process gone')
    expect(host.shells.list(agent)).toHaveLength(before)
    expect(readdirSync(host.shells.logDir)).toHaveLength(logs)
  })

  it('names job_output in the start text; three job_output reads of a growing log are disjoint pieces that make the log', async () => {
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'for i in $(seq 1 30); do echo "line $i"; sleep 0.05; done', run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    expect(textOf(started)).toContain(`Read new output with job_output ${value.job_id}; stop the shell with job_kill.`)
    const tasks = await host.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    expect(tasks?.result).toMatchObject({ kind: 'success', text: expect.stringContaining(`\n\nRead new output with job_output <job id>: ${value.shell_id} is ${value.job_id}.\n`) as string })
    const pieces: string[] = []
    const read = async () => {
      const text = textOf(await execTool(host.ctx, 'job_output', { job_id: value.job_id }, { agent }))
      pieces.push(text.replace(/(?:\(no new output\)\n)?\[status: [^\]]*\]$/, ''))
    }
    await until(() => (host.shells.find(value.shell_id, agent)?.bytes ?? 0) > 20, 'some output')
    await read()
    await until(() => (host.shells.find(value.shell_id, agent)?.bytes ?? 0) > 120, 'more output')
    await read()
    await host.shells.settled(value.shell_id)
    await read()
    expect(pieces.every((piece) => piece.length > 0)).toBe(true)
    expect(pieces.join('')).toBe(readFileSync(value.output_file, 'utf8'))
    await host.ctx.jobs.wait(JobId(value.job_id ?? ''), 5000, agent)
  })
})

describe('timeout → background refused', () => {
  it('stops the command with the reason when the background limit is full, and as before with onTimeout: kill', async () => {
    const full = await withJobs({ maxEntries: 1 })
    try {
      const agent = full.agent()
      await execTool(full.ctx, 'bash_bg', { command: 'sleep 30', run_in_background: true }, { agent })
      const result = await execTool(full.ctx, 'bash_bg', { command: 'echo so far; sleep 30', timeout: 300 }, { agent })
      expect(textOf(result)).toBe('so far\n[timed out after 300ms]\n[not moved to the background: this session already runs 1 background shells (maxEntries 1)]\n[killed by signal: SIGTERM]')
      expect(full.shells.list(agent)).toHaveLength(1)
    } finally {
      await full.dispose()
    }
    const killing = await withJobs({ onTimeout: 'kill' })
    try {
      const agent = killing.agent()
      const result = await execTool(killing.ctx, 'bash_bg', { command: 'echo so far; sleep 30', timeout: 300 }, { agent })
      expect(textOf(result)).toBe('so far\n[timed out after 300ms]\n[killed by signal: SIGTERM]')
      expect(killing.shells.list(agent)).toEqual([])
    } finally {
      await killing.dispose()
    }
  })
})
