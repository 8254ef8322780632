import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import ApprovalService from '@deepseek-ai/dsh-user-approval'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import { execTool, makeTmpDir, removeTmpDir, runTurn, textOf, textTurn, toolResults, toolTurn, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import { readHost } from './harness.ts'

let host: Host | undefined
const dirs: string[] = []
afterEach(async () => {
  await host?.dispose()
  host = undefined
  for (const dir of dirs.splice(0)) await removeTmpDir(dir)
})

async function makeDir(files: Record<string, string> = {}): Promise<string> {
  const root = await makeTmpDir()
  dirs.push(root)
  for (const [name, content] of Object.entries(files)) await writeFile(join(root, name), content)
  return root
}

/** One read_file call made by the model through the real agent loop (approval needs an open turn). */
async function throughAgent(on: Host, args: unknown) {
  ;(on.adapter as unknown as { script: unknown[] }).script.push(toolTurn({ id: 'r1', name: 'read_file', args }), textTurn('done'))
  const [result] = toolResults(await runTurn(on.ctx, on.agent()))
  return result!
}

async function readAs(on: Host, cwd: string, file_path: string) {
  const result = await execTool(on.ctx, 'read_file', { file_path }, { agent: on.agent(cwd) })
  return { isError: result.isError, text: textOf(result) }
}

describe('the workspace of a call', () => {
  it('relative paths resolve against the sandbox policy root when one is composed', async () => {
    host = await readHost()
    const root = await makeDir({ 'policy.txt': 'from the policy root\n' })
    await host.ctx.plugin(SandboxPolicy, { workspaceRoot: root })
    // No agent: the policy's root, not the provider's default cwd.
    expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'policy.txt' }))).toBe('1\tfrom the policy root')
    // Under the policy, a session's workspace is its cwd (the policy resolves it so).
    const session = await makeDir({ 'policy.txt': 'from the session\n' })
    expect(await readAs(host, session, 'policy.txt')).toEqual({ isError: false, text: '1\tfrom the session' })
  })

  it('without an agent, the provider default cwd', async () => {
    host = await readHost()
    await writeFile(join(host.cwd, 'default.txt'), 'provider cwd\n')
    expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'default.txt' }))).toBe('1\tprovider cwd')
  })
})

describe('outside the workspace (default ask, no approval service: denied)', () => {
  it('an absolute path outside is refused and nothing is read', async () => {
    host = await readHost()
    const outside = await makeDir({ 'secret.txt': 'top secret\n' })
    const ws = await makeDir()
    const result = await readAs(host, ws, join(outside, 'secret.txt'))
    expect(result.isError).toBe(true)
    expect(result.text).toBe(`Error: file_path "${join(outside, 'secret.txt')}" is outside the workspace ${ws}`)
  })

  it('a symlink inside pointing out is outside (realpath containment)', async () => {
    host = await readHost()
    const outside = await makeDir({ 'secret.txt': 'top secret\n' })
    const ws = await makeDir()
    await symlink(join(outside, 'secret.txt'), join(ws, 'link.txt'))
    const result = await readAs(host, ws, 'link.txt')
    expect(result.isError).toBe(true)
    expect(result.text).toContain('is outside the workspace')
    expect(result.text).not.toContain('top secret')
  })

  it('a symlink that stays inside is fine', async () => {
    host = await readHost()
    const ws = await makeDir({ 'real.txt': 'real\n' })
    await symlink('real.txt', join(ws, 'alias.txt'))
    expect(await readAs(host, ws, 'alias.txt')).toEqual({ isError: false, text: '1\treal' })
  })

  it('outsideWorkspace: allow reads it; deny refuses with the reason', async () => {
    const outside = await makeDir({ 'open.txt': 'open\n' })
    host = await readHost({ outsideWorkspace: 'allow' })
    expect(await readAs(host, host.cwd, join(outside, 'open.txt'))).toEqual({ isError: false, text: '1\topen' })
    await host.dispose()
    host = await readHost({ outsideWorkspace: 'deny' })
    expect(await readAs(host, host.cwd, join(outside, 'open.txt'))).toEqual({
      isError: true,
      text: `Error: file_path "${join(outside, 'open.txt')}" is outside the workspace ${host.cwd} (outsideWorkspace: deny) — read a file inside the workspace`,
    })
  })

  it('with an approval service composed the user is asked: approved reads, rejected refuses', async () => {
    host = await readHost()
    await host.ctx.plugin(ApprovalService, { policy: 'ask' })
    const outside = await makeDir({ 'asked.txt': 'asked\n' })
    const asked: string[] = []
    let answer: 'allowed-once' | 'rejected' = 'allowed-once'
    host.ctx.on('approval/request', async (request) => {
      asked.push(`${request.toolName}: ${request.reason}`)
      return answer
    })
    const path = join(outside, 'asked.txt')
    expect(await throughAgent(host, { file_path: path })).toEqual({ callId: 'r1', isError: false, text: '1\tasked' })
    expect(asked).toEqual([`read_file: file_path "${path}" is outside the workspace ${host.cwd}`])
    answer = 'rejected'
    const rejected = await throughAgent(host, { file_path: path })
    expect(rejected.isError).toBe(true)
    expect(rejected.text).not.toContain('1\tasked')
    await writeFile(join(host.cwd, 'in.txt'), 'in\n')
    expect((await throughAgent(host, { file_path: 'in.txt' })).text).toBe('1\tin')
    expect(asked).toHaveLength(2)
  })
})

describe('the background-shell log directory counts as inside', () => {
  it('a stand-in backgroundShells service: its logDir is readable without asking', async () => {
    host = await readHost()
    const logs = await makeDir({ 'bg-abc123.log': 'log line\n' })
    const other = await makeDir({ 'x.log': 'x\n' })
    host.ctx.provide('backgroundShells', { logDir: logs })
    expect(await readAs(host, host.cwd, join(logs, 'bg-abc123.log'))).toEqual({ isError: false, text: '1\tlog line' })
    expect((await readAs(host, host.cwd, join(other, 'x.log'))).isError).toBe(true)
  })

  it('the real tool-bash-bg: a background shell output_file reads without asking', async () => {
    host = await readHost()
    await host.ctx.plugin(BashBg, {})
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: 'echo from-the-shell', run_in_background: true }, { agent })
    expect(started.isError).toBe(false)
    const value = (started.isError ? {} : started.value) as { shell_id: string, output_file: string }
    expect(value.output_file.startsWith(host.cwd)).toBe(false)
    await host.ctx.get('backgroundShells')!.settled(value.shell_id)
    const result = await execTool(host.ctx, 'read_file', { file_path: value.output_file }, { agent })
    expect(textOf(result)).toBe('1\tfrom-the-shell')
  })
})

describe('a missing path outside', () => {
  it('is judged by where it would be (the nearest existing ancestor)', async () => {
    host = await readHost()
    const outside = await makeDir()
    await mkdir(join(outside, 'sub'))
    const result = await readAs(host, host.cwd, join(outside, 'sub', 'missing.txt'))
    expect(result.text).toBe(`Error: file_path "${join(outside, 'sub', 'missing.txt')}" is outside the workspace ${host.cwd}`)
  })
})
