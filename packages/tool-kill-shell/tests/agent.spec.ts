/**
 * The agent loop with a scripted model (the only fake): start an HTTP server with bash_bg, wait
 * until it answers, stop it with kill_shell, then prove the port is free again.
 */
import { createServer, type AddressInfo } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { runTurn, textTurn, toolResults, toolTurn } from '@gencode-ai/testkit'
import { bootKs, groupPids, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

/** The shell id the bash_bg result named, as the model would read it from the conversation. */
function shellId(request: GenerateOptions): string {
  const match = /bg-[a-z0-9]{6}/.exec(JSON.stringify(request.messages))
  if (match === null) throw new Error('no shell id in the conversation')
  return match[0]
}

/** Listen on `port` (or a free one for 0), then close: resolves the port, rejects when it is taken. */
function bind(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as AddressInfo).port
      server.close(() => resolve(bound))
    })
  })
}

it('starts a server with bash_bg, stops it with kill_shell, and the port is free again', async () => {
  const port = await bind(0)
  const server = `exec ${JSON.stringify(process.execPath)} -e "require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')"`
  host = await bootKs({
    jobs: true,
    script: [
      toolTurn({ id: 't1', name: 'bash_bg', args: { command: server, run_in_background: true, description: 'Start the server' } }),
      toolTurn({ id: 't2', name: 'bash_bg', args: { command: `until (echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null; do sleep 0.05; done; echo up`, timeout: 20000 } }),
      (request) => toolTurn({ id: 't3', name: 'kill_shell', args: { shell_id: shellId(request) } }),
      textTurn('the server is stopped'),
    ],
  })
  const agent = host.agent()
  const results = toolResults(await runTurn(host.ctx, agent))
  expect(results.map((result) => [result.callId, result.isError])).toEqual([['t1', false], ['t2', false], ['t3', false]])
  expect(results[1]?.text).toContain('up')
  const [shell] = host.shells.list(agent)
  expect(results[2]?.text).toMatch(new RegExp(`^Stopped ${shell?.id}: sent SIGTERM; all processes exited after \\d+ ms\\. No SIGKILL needed\\.$`))
  // The model saw the tool: the request after the bash_bg call offered kill_shell.
  expect(host.adapter.requests[0]?.tools?.map((tool) => tool.name)).toContain('kill_shell')
  expect(shell?.status).toBe('killed')
  expect(groupPids(shell?.pid ?? -1)).toEqual([])
  await expect(bind(port)).resolves.toBe(port)
})
