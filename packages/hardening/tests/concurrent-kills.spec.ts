/**
 * Issue 33, finding 16: two concurrent kill_shell calls on one shell both answered "Stopped …: sent SIGTERM …". Now
 * one claims the stop and the other says it joined it, in its value (`joined: true`) and its text, in both
 * compositions, on a real shell that ignores SIGTERM (so the first stop is still under way when the second comes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { SeamRuntime } from '../src/compositions.ts'
import { pidsWithToken as running, uniqueToken, until } from '../src/procs.ts'


const WORLDS = [{ name: 'the local process layer', seam: false }, { name: 'ctx.subprocess', seam: true }] as const

describe.each(WORLDS)('two kill_shell calls on one shell at once, through $name', ({ seam }) => {
  let host: Host

  beforeAll(async () => {
    host = await bootHost()
    if (seam) await host.ctx.plugin(SeamRuntime)
    await host.ctx.plugin(BashBg, {})
    await host.ctx.plugin(KillShell, { timeoutMs: 500 })
  })

  afterAll(async () => { await host.dispose() })

  it('one claims the stop, the other says it joined it; the shell is gone', async () => {
    const sleep = uniqueToken()
    const started = await execTool(host.ctx, 'bash_bg', { command: `trap '' TERM; sleep ${sleep}; true`, run_in_background: true })
    const { shell_id } = started.value as { shell_id: string }
    await until(() => running(sleep).length === 2, 'the shell to start its sleep')
    const results = await withinMs(30_000, 'both kill_shell calls', Promise.all([
      execTool(host.ctx, 'kill_shell', { shell_id }), execTool(host.ctx, 'kill_shell', { shell_id }),
    ]))
    const values = results.map((result) => result.value as { success: boolean, joined?: boolean })
    expect(values.map((value) => value.success)).toEqual([true, true])
    expect(values.filter((value) => value.joined === true)).toHaveLength(1)
    const texts = results.map(textOf)
    expect(texts.filter((text) => text.startsWith(`Stopped ${shell_id}: sent SIGTERM`))).toHaveLength(1)
    expect(texts.filter((text) => text.startsWith(`Stopped ${shell_id}: joined the stop already under way, which sent SIGTERM`))).toHaveLength(1)
    await until(() => running(sleep).length === 0, 'no process of the shell left', 5000)
  })
})
