/**
 * Resume takes running shells back (issue 29 item 4): with keepOnExit a shell outlives its host; a later host that
 * resumes the session takes it back from its keeper under the same shell id, before the first step: /tasks lists it,
 * job_output reads its log (written while no host ran, no gap), the model is told once that it still runs, and
 * kill_shell's stop leaves nothing of it. Real hosts, a real persisted session, real processes judged in /proc.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import type { GenerateOptions, UserMessage } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import { bootHost, execTool, runTurn, sessionEvents, textOf, textTurn, type Host, type ScriptEntry } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { Ledger, ledgerRoot } from '../src/local/ledger.ts'
import { marker, ownHomeAndTmp, pidsWithMarker, until } from './harness.ts'

// A ledger and a TMPDIR of this file's own: hosts other files boot meanwhile must not reap (or see) these shells.
const { home, tmp } = ownHomeAndTmp('bg-takeback')

async function boot(script: ScriptEntry[]): Promise<Host> {
  const host = await bootHost({ persistence: join(home, 'sessions'), script })
  await host.ctx.plugin(CommandRuntime)
  await host.ctx.plugin(ToolJobs, {})
  await host.ctx.plugin(BashBg, { keepOnExit: true })
  return host
}

const noticeText = (request: GenerateOptions | undefined) => (request?.messages ?? [])
  .filter((message) => message.role === 'user' && message.source.kind === 'plugin' && message.source.plugin === 'tool-bash-bg')
  .flatMap((message) => message.content.flatMap((part) => part.type === 'text' ? [part.text] : []))
  .join('\n')

it('a kept shell is taken back under its id: /tasks, job_output, the one notice, and a stop that leaves nothing', async () => {
  const session = 'takeback-kept'
  const mark = marker('kept')
  const go = join(tmp, `${mark}.go`)
  const first = await boot([textTurn('started')])
  const agent1 = first.agent(undefined, session)
  await runTurn(first.ctx, agent1, 'start a server')
  const started = await execTool(first.ctx, 'bash_bg', { command: `echo before; sleep 1; echo while-no-host; until [ -e ${go} ]; do sleep 0.05; done; echo after >&2; exec -a ${mark} sleep 120`, run_in_background: true }, { agent: agent1 })
  const { shell_id: shellId, output_file: log } = started.value as unknown as { shell_id: string, output_file: string }
  await until(() => new Ledger(ledgerRoot()).read(session, shellId) !== undefined, 'its ledger record')
  await first.ctx.get('sessions')?.flush(agent1.session)
  await first.dispose()
  await until(() => readFileSync(log, 'utf8').includes('while-no-host'), 'the shell to run on, and log, with no host')

  const second = await boot([textTurn('noted')])
  try {
    const { agent } = await second.ctx.agents.resume({ resumeSessionId: SessionId(session), agentOptions: { provider: 'mock', model: 'mock' } })
    // Right after the resume, before any turn.
    const tasks = await second.ctx.commands?.execute(agent, '/tasks', [], AbortSignal.timeout(30_000))
    expect(tasks?.result.kind === 'success' ? tasks.result.text : '').toContain(shellId)
    await runTurn(second.ctx, agent, 'is it still up?')
    expect(noticeText(second.adapter.requests[0])).toMatch(new RegExp(`^${shellId} ".*" \\(\\d+ characters\\) still running \\(taken back after a host restart; \\d+s, \\d+ B\\)$`))
    const snapshot = second.ctx.get('backgroundShells')?.find(shellId, agent)
    expect(snapshot).toMatchObject({ id: shellId, status: 'running' })
    const output = await execTool(second.ctx, 'job_output', { job_id: snapshot?.job_id }, { agent })
    expect(textOf(output)).toContain('before\nwhile-no-host\n')
    // Output written after the take-back reaches this host too (the log the keeper writes, looked at as it grows).
    writeFileSync(go, '')
    let later = ''
    for (let i = 0; i < 100 && !later.includes('after\n'); i++) {
      later += textOf(await execTool(second.ctx, 'job_output', { job_id: snapshot?.job_id }, { agent }))
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(later).toContain('after\n')
    expect(second.ctx.get('backgroundShells')?.find(shellId, agent)?.bytes).toBe(27)
    await until(() => pidsWithMarker(mark, true).length === 1, 'the server')
    const killed = await second.ctx.get('backgroundShells')?.stop(shellId, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, agent)
    expect(killed).toMatchObject({ outcome: 'terminated', survivors: [] })
    expect(pidsWithMarker(mark)).toEqual([])
  } finally {
    await second.dispose()
  }
}, 60_000)

/** The text of every bash_bg notice that entered the agent's inbox, in order. */
const noticesOf = (agent: { session: Parameters<typeof sessionEvents>[0] }) => sessionEvents(agent.session)
  .flatMap((event) => event.type === 'agent/inbox/spliced' ? (event.data as { inserted: UserMessage[] }).inserted : [])
  .filter((message) => message.source.kind === 'plugin' && message.source.plugin === 'tool-bash-bg')
  .map((message) => message.content.flatMap((part) => part.type === 'text' ? [part.text] : []).join(''))

it('a watch is re-armed when its shell is taken back: the rest of its lines, none told twice, the unwatched span named', async () => {
  const session = 'takeback-watch'
  const mark = marker('watched')
  const go = (step: number) => writeFileSync(join(tmp, `${session}-go${step}`), '')
  const waitGo = (step: number) => `while [ ! -e ${join(tmp, `${session}-go${step}`)} ]; do sleep 0.05; done`
  const first = await boot([textTurn('started'), textTurn('seen'), textTurn('seen')])
  const agent1 = first.agent(undefined, session)
  await runTurn(first.ctx, agent1, 'start it')
  const command = `echo "ERROR one"; ${waitGo(2)}; echo "ERROR two"; ${waitGo(3)}; echo "ERROR three"; exec -a ${mark} sleep 120`
  const started = await execTool(first.ctx, 'bash_bg', { command, run_in_background: true, watch: 'ERROR', watch_max: 5 }, { agent: agent1 })
  const { shell_id: shellId, output_file: log } = started.value as unknown as { shell_id: string, output_file: string }
  await until(() => noticesOf(agent1).some((text) => text.includes('matching line') && text.includes('ERROR one')), 'the first host\'s watch notice')
  await until(() => new Ledger(ledgerRoot()).read(session, shellId)?.watch?.delivered === 1, 'the watch in the ledger')
  await first.ctx.get('sessions')?.flush(agent1.session)
  await first.dispose()
  // Written while no host runs: never watched, and named as such.
  go(2)
  await until(() => readFileSync(log, 'utf8').includes('ERROR two'), 'a line written while no host ran')

  const second = await boot([textTurn('noted'), textTurn('noted'), textTurn('noted'), textTurn('noted')])
  try {
    const { agent } = await second.ctx.agents.resume({ resumeSessionId: SessionId(session), agentOptions: { provider: 'mock', model: 'mock' } })
    await until(() => noticesOf(agent).some((text) => text.includes('re-armed')), 'the re-armed notice')
    go(3)
    await until(() => noticesOf(agent).some((text) => text.includes('matching line') && text.includes('ERROR three')), 'the re-armed watch\'s notice')
    const told = noticesOf(agent)
    const rearmed = told.find((text) => text.includes('re-armed')) ?? ''
    const offset = readFileSync(log, 'utf8').indexOf('ERROR two')
    expect(rearmed).toContain(`${shellId} watch "ERROR" re-armed after a host restart: 4 of 5 lines left; log bytes 10-${offset + 10} of ${log}`)
    // Watch notices (the resume notice names the command, which holds every line's text too).
    const matches = told.filter((text) => text.includes('matching line'))
    expect(matches.filter((text) => text.includes('ERROR one'))).toHaveLength(1)
    expect(told.filter((text) => /^\[?(?:stderr\] )?ERROR two$/m.test(text))).toEqual([])
    expect(matches.filter((text) => text.includes('ERROR three'))).toHaveLength(1)
    expect(new Ledger(ledgerRoot()).read(session, shellId)?.watch).toMatchObject({ pattern: 'ERROR', watch_max: 4, delivered: 1 })
    await second.ctx.get('backgroundShells')?.stop(shellId, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, agent)
    expect(pidsWithMarker(mark)).toEqual([])
  } finally {
    await second.dispose()
  }
}, 60_000)
