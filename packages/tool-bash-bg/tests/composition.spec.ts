import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, membersOf, marker, pidsWithMarker, until, type BgHost } from './harness.ts'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

// A TMPDIR of this file's own: /tasks must not report the leftovers of a host another test file killed.
const savedTmp = process.env.TMPDIR
let tmp = ''
beforeAll(() => { tmp = mkdtempSync(join(tmpdir(), 'bg-composition-')); process.env.TMPDIR = tmp })
afterAll(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR
  else process.env.TMPDIR = savedTmp
  rmSync(tmp, { recursive: true, force: true })
})

interface Bg { shell_id: string, pid: number, output_file: string }

describe('/tasks', () => {
  it('prints the running shells of the calling session and the hint of the tool that stops them', async () => {
    host = await bootBashBg({}, { before: async (h) => { await h.ctx.plugin(CommandRuntime) } })
    const agent = host.agent()
    const other = host.agent()
    const empty = await host.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    expect(empty?.result).toEqual({ kind: 'success', text: 'No background shells are running.' })
    const mine = (await execTool(host.ctx, 'bash_bg', { command: 'sleep 60', run_in_background: true }, { agent })).value as unknown as Bg
    await execTool(host.ctx, 'bash_bg', { command: 'sleep 61', run_in_background: true }, { agent: other })
    const listed = await host.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    const text = listed?.result.kind === 'success' ? listed.result.text ?? '' : ''
    const lines = text.split('\n')
    expect(lines[0]).toBe('Active Background Tasks:')
    expect(lines[2]).toBe('│ ID          Command              Started       Status           Output                 │')
    expect(lines[4]).toMatch(new RegExp(`^│ ${mine.shell_id}   sleep 60             \\d+ sec ago +running +no output +│$`))
    // No kill_shell and no job_kill composed: no hint names a tool that is not there.
    expect(lines).toHaveLength(6)
    // tool-kill-shell, when composed, names itself on the registry.
    host.shells.attachStopper({ toolName: 'kill_shell', defaultKill: { signal: 'SIGTERM', force: true, timeoutMs: 5000 } })
    const hinted = await host.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    const hintedLines = (hinted?.result.kind === 'success' ? hinted.result.text ?? '' : '').split('\n')
    expect(hintedLines).toHaveLength(8)
    expect(hintedLines[7]).toBe('Use kill_shell with a shell_id to stop a task.')
  })
})

describe('sandboxed composition (dsh-sandbox-local + dsh-sandbox-policy, workspace-write)', () => {
  const sandboxed = () => bootBashBg({}, {
    before: async (h) => {
      await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
      await h.ctx.plugin(LocalSandboxProvider, {})
    },
  })

  it('runs under the sandbox runner and still kills every process of the group', async () => {
    host = await sandboxed()
    const agent = host.agent()
    const mark = marker('sandbox')
    const started = await execTool(host.ctx, 'bash_bg', { command: `(exec -a ${mark} sleep 60) & (bash -c 'exec -a ${mark} sleep 60') & exec -a ${mark} sleep 60`, run_in_background: true }, { agent })
    const value = started.value as unknown as Bg
    await until(() => pidsWithMarker(mark, true).length === 3, 'three sandboxed processes')
    // Every process runs confined (the Landlock runner sets no_new_privs before exec; the host here has no bwrap).
    for (const pid of pidsWithMarker(mark, true)) expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/NoNewPrivs:\s+1/)
    expect(readFileSync(`/proc/${process.pid}/status`, 'utf8')).toMatch(/NoNewPrivs:\s+0/)
    expect(membersOf(value.shell_id)).toEqual(expect.arrayContaining(pidsWithMarker(mark, true)))
    const outcome = await host.shells.stop(value.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 2000 }, agent)
    expect(outcome.survivors).toEqual([])
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('confines writes: outside the workspace is denied, inside works', async () => {
    host = await sandboxed()
    const agent = host.agent()
    const result = await execTool(host.ctx, 'bash_bg', { command: 'echo ok > inside.txt && cat inside.txt; echo x > /usr/denied-by-sandbox.txt' }, { agent })
    expect(textOf(result)).toMatch(/^ok\n\[stderr\]\n.*(Permission denied|Read-only file system)\n\[exit code: 1\]$/s)
  })

  it('refuses with the host SANDBOX_UNAVAILABLE error when no backend is usable', async () => {
    host = await sandboxed()
    // The one injected fault: the provider's own test hook empties the runner chain.
    ;(host.ctx.sandbox as unknown as { internals: { chain: string[] } }).internals.chain = []
    const result = await execTool(host.ctx, 'bash_bg', { command: 'true', run_in_background: true }, { agent: host.agent() })
    expect(result.isError).toBe(true)
    expect(result.error?.info?.code).toBe('SANDBOX_UNAVAILABLE')
    expect(host.shells.list(undefined)).toEqual([])
  })
})
