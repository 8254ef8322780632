/**
 * Issue 33, findings 12 and 17. A plugin dispose (the host's shutdown) while kill_shell `timeout=60000` waited on a
 * TERM-ignoring shell joined that wait, so the host exited about 60 s later; now the dispose's stop runs beside the kill
 * under way and ends within its own grace. A clean end left the host's crash record (`host-*.json`): the registry's
 * delayed save re-wrote it after the host directory was removed; now a removed host directory takes no save. Both
 * compositions, real processes, found in /proc by a token no other process carries.
 */
import { existsSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { bootHost, execTool, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { SeamRuntime } from '../src/compositions.ts'
import { pidsWithToken as running, uniqueToken, until } from '../src/procs.ts'


const WORLDS = [{ name: 'the local process layer', seam: false }, { name: 'ctx.subprocess', seam: true }] as const

describe.each(WORLDS)('stops at shutdown, through $name', ({ seam }) => {
  let host: Host | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  const boot = async () => {
    host = await bootHost()
    if (seam) await host.ctx.plugin(SeamRuntime)
    const fiber = await host.ctx.plugin(BashBg, {})
    await host.ctx.plugin(KillShell, {})
    return { ctx: host.ctx, fiber }
  }

  it('a dispose during kill_shell timeout=60000 on a TERM-ignoring shell ends within its own grace; both calls end, nothing is left', async () => {
    const { ctx, fiber } = await boot()
    const sleep = uniqueToken()
    // `; true` keeps bash as the sleep's parent: two processes, the sleep started only once the trap is set.
    const started = await execTool(ctx, 'bash_bg', { command: `trap '' TERM; sleep ${sleep}; true`, run_in_background: true })
    const { shell_id } = started.value as { shell_id: string }
    await until(() => running(sleep).length === 2, 'the shell to start its sleep')
    const kill = execTool(ctx, 'kill_shell', { shell_id, timeout: 60_000 })
    // The kill is under way (its SIGTERM ignored) before the dispose comes.
    await new Promise((resolve) => setTimeout(resolve, 500))
    // The dispose's grace is kill_shell's default wait (5 s) and a SIGKILL; 60 s would fail this bound.
    await withinMs(30_000, 'the dispose', fiber.dispose())
    await withinMs(30_000, 'the kill_shell call', kill)
    await until(() => running(sleep).length === 0, 'no process of the shell left', 5000)
  }, 90_000)

  it('a clean end leaves no crash record, even when a shell ended just before (its delayed save comes after)', async () => {
    const { ctx, fiber } = await boot()
    const registry = ctx.get('backgroundShells') as ShellRegistry
    const record = `${registry.logDir}.json`
    const sleep = uniqueToken()
    await execTool(ctx, 'bash_bg', { command: `sleep ${sleep}`, run_in_background: true })
    await until(() => running(sleep).length > 0, 'the shell to start')
    expect(existsSync(record)).toBe(true)
    await withinMs(30_000, 'the dispose', fiber.dispose())
    expect(existsSync(record)).toBe(false)
    // Past the registry's save delay (200 ms), with room for a loaded machine: a due save would have re-written it.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(existsSync(record)).toBe(false)
    expect(running(sleep)).toEqual([])
  })
})
