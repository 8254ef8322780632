/**
 * Issue 33, findings 5 and 6: a foreground bash_bg command outlived host shutdown (SIGTERM, SIGINT, a plugin
 * dispose), and after a dispose its call was never answered; SIGHUP (a closed terminal) ended the host with no cleanup
 * at all. Now foreground runs are tracked as background shells are: in both compositions a dispose stops the command
 * and answers the call, and SIGTERM, SIGINT and SIGHUP to a real host process leave no process of the command behind.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { SeamRuntime } from '../src/compositions.ts'
import { pidsWithToken as running, uniqueToken, until } from '../src/procs.ts'


/** A sleep no other process runs: its odd duration is the token /proc is searched for. */
function uniqueSleep(): { command: string, token: string } {
  const token = uniqueToken()
  return { command: `sleep ${token}`, token }
}

const WORLDS = [{ name: 'the local process layer', seam: false }, { name: 'ctx.subprocess', seam: true }] as const

describe.each(WORLDS)('a foreground run when the plugin is disposed, through $name', ({ seam }) => {
  let host: Host | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  it('stops the command and answers the call, saying why', async () => {
    host = await bootHost()
    if (seam) await host.ctx.plugin(SeamRuntime)
    const fiber = await host.ctx.plugin(BashBg, {})
    const { command, token } = uniqueSleep()
    const call = execTool(host.ctx, 'bash_bg', { command })
    await until(() => running(token).length > 0, 'the command to start')
    await withinMs(30_000, 'the dispose', fiber.dispose())
    const result = await withinMs(30_000, 'the call to be answered', call)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain('bash_bg: the command was stopped because the plugin stopped (host shutdown or reload)')
    expect(running(token)).toEqual([])
  })
})

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const

describe.each(WORLDS)('a foreground run when a real host process is signalled, through $name', ({ seam }) => {
  it.each(SIGNALS)('%s: the host ends by it and no process of the command is left', async (signal) => {
    const { command, token } = uniqueSleep()
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../fixtures/fg-host.ts'), seam ? 'seam' : 'local', command], {
      cwd: join(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      let out = ''
      await withinMs(60_000, 'the child host to start the call', new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => { out += String(data); if (out.includes('running')) resolve() })
        child.once('exit', (code) => reject(new Error(`child host exited early (${code}): ${out}`)))
      }))
      await until(() => running(token).length > 0, 'the command to start', 30_000)
      const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, by) => resolve({ code, signal: by })))
      child.kill(signal)
      expect(await withinMs(30_000, 'the child host to exit', exited)).toEqual({ code: null, signal })
      // The exit hook signalled the command before the host ended; a bounded wait for the kernel to finish it.
      await until(() => running(token).length === 0, 'no process of the command left', 5000)
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  }, 120_000)
})
