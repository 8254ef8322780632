/**
 * Completion notices while the host runs (issue 29 item 5): bash_bg tells its session's model of a shell's end
 * itself, once, and tool-jobs' own notice for the job is held back; the wake rules stay tool-jobs' (an idle agent is
 * woken, at most 3 times per user turn; past that the notice waits for the next turn); a shell the model stopped
 * is not told again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import type { UserMessage } from '@deepseek-ai/dsh-llm'
import type { SessionEvent } from '@deepseek-ai/dsh-session'
import { execTool, makeTmpDir, removeTmpDir, runTurn, sessionEvents, textTurn, waitForIdle } from '@gencode-ai/testkit'
import { bootBashBg, until, type BgHost } from './harness.ts'

let home: string
let host: BgHost

beforeAll(async () => {
  home = await makeTmpDir('notices-home-')
  process.env.DSH_HOME = home
  // Every model turn answers in text: the notices' turns, and the user's.
  host = await bootBashBg({}, { script: Array.from({ length: 20 }, () => textTurn('noted')), before: async (h) => { await h.ctx.plugin(ToolJobs, {}) } })
})
afterAll(async () => {
  await host.dispose()
  delete process.env.DSH_HOME
  await removeTmpDir(home)
})

const userMessages = (events: readonly SessionEvent[]) =>
  events.flatMap((event) => event.type === 'user/message' ? [event.data] : [])
const fromPlugin = (message: UserMessage, plugin: string) => message.source.kind === 'plugin' && message.source.plugin === plugin
const textOfMessage = (message: UserMessage) => message.content.map((part) => part.type === 'text' ? part.text : '').join('')

async function startBg(agent: ReturnType<BgHost['agent']>, command: string): Promise<{ shell_id: string, job_id: string }> {
  const started = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true }, { agent })
  return started.value as unknown as { shell_id: string, job_id: string }
}

describe('completion notices while the host runs', () => {
  it('one notice, bash_bg\'s, in tool-jobs\' words with the shell id and log; none from tool-jobs', async () => {
    const agent = host.agent()
    const idle = waitForIdle(host.ctx, agent)
    const bg = await startBg(agent, 'echo out; exit 5')
    await idle
    const told = userMessages(sessionEvents(agent.session))
    expect(told.filter((message) => fromPlugin(message, 'tool-jobs'))).toEqual([])
    const ours = told.filter((message) => fromPlugin(message, 'tool-bash-bg'))
    expect(ours).toHaveLength(1)
    const log = host.shells.find(bg.shell_id, agent)?.output_file ?? ''
    expect(textOfMessage(ours[0] as UserMessage)).toBe(
      `background job ${bg.job_id} (bash_bg: echo out; exit 5) finished [status: completed, exit code: 5]. Shell ${bg.shell_id}; its log: ${log} (job_output ${bg.job_id} reads new output).`,
    )
  })

  it('wakes an idle agent at most 3 times per user turn; the rest ride the next turn, each told once', async () => {
    const agent = host.agent()
    const shells = []
    const turns = () => sessionEvents(agent.session).filter((event) => event.type === 'turn/start').length
    // One at a time, each ending while the agent is idle: the first three wake it, the last two wait.
    for (let i = 0; i < 5; i++) {
      const bg = await startBg(agent, `exit ${i}`)
      shells.push(bg)
      await host.shells.settled(bg.shell_id)
      // Past the budget the notice waits in the inbox: wait until it is handed over (its end is told a few ticks after it settles).
      await until(() => agent.status === 'idle' && turns() === Math.min(i + 1, 3) && agent.inbox.nextStep.length === Math.max(0, i - 2), `notice ${i + 1}`)
    }
    expect(turns()).toBe(3)
    expect(agent.inbox.nextStep).toHaveLength(2)
    await runTurn(host.ctx, agent, 'and now?')
    const ours = userMessages(sessionEvents(agent.session)).filter((message) => fromPlugin(message, 'tool-bash-bg'))
    for (const bg of shells) expect(ours.filter((message) => textOfMessage(message).includes(`Shell ${bg.shell_id};`))).toHaveLength(1)
    expect(ours).toHaveLength(5)
  })

  it('a shell the model stopped is not told again', async () => {
    const agent = host.agent()
    const bg = await startBg(agent, 'sleep 60')
    await execTool(host.ctx, 'job_kill', { job_id: bg.job_id }, { agent })
    await host.shells.settled(bg.shell_id)
    await runTurn(host.ctx, agent, 'still there?')
    expect(userMessages(sessionEvents(agent.session)).filter((message) => fromPlugin(message, 'tool-bash-bg') || fromPlugin(message, 'tool-jobs'))).toEqual([])
  })
})
