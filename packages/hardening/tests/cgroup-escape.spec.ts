/**
 * Issue 33, finding 13: a command that moved itself into another cgroup (root writing its pid to another cgroup's
 * `cgroup.procs`, as systemd-run would) and cleared its environment escaped, and kill_shell still said "all processes
 * exited" with `tracking: cgroup`. Such a process is still in the shell's process group: a shell whose cgroup is
 * empty while its group is not counts the group's members, so the kill reaches the escapee and the answer is true.
 * Both compositions (the seam stops the tree its own way); skipped where this process cannot move processes (not root).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { COMPOSITIONS } from '../src/compositions.ts'
import { pidsWithToken, uniqueToken, until } from '../src/procs.ts'

const ROOT = process.getuid?.() === 0
/** The root cgroup of each hierarchy a shell may be tracked in: writing a pid there moves it out of the shell's. */
const ESCAPE = ['/sys/fs/cgroup/cgroup.procs', '/sys/fs/cgroup/unified/cgroup.procs', '/sys/fs/cgroup/freezer/cgroup.procs']

describe.skipIf(!ROOT).each(COMPOSITIONS)('a process that leaves its cgroup and clears its environment, through $name', ({ boot }) => {
  let host: Host

  beforeAll(async () => {
    host = await boot()
    await host.ctx.plugin(KillShell, { timeoutMs: 500 })
  })

  afterAll(async () => { await host.dispose() })

  it('is stopped by kill_shell, whose answer is true', async () => {
    const sleep = uniqueToken()
    const moves = ESCAPE.map((file) => `echo $$ > ${file} 2>/dev/null`).join('; ')
    const command = `env -i /bin/sh -c '${moves}; trap "" TERM; exec sleep ${sleep}' & wait`
    const started = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true })
    const { shell_id } = started.value as { shell_id: string }
    await until(() => pidsWithToken(`sleep\0${sleep}`).length === 1, 'the escapee to exec its sleep')
    const result = await withinMs(30_000, 'kill_shell', execTool(host.ctx, 'kill_shell', { shell_id }))
    const value = result.value as { success: boolean, survivors: number[] }
    const left = pidsWithToken(`sleep\0${sleep}`)
    // A true answer: either nothing is left, or what is left is named.
    expect({ left, text: textOf(result) }).toMatchObject({ left: value.survivors })
    await until(() => pidsWithToken(`sleep\0${sleep}`).length === 0, 'no escapee left', 5000)
    expect(value.success).toBe(true)
  })
})
