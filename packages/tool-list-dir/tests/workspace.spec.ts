import { rename, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import ApprovalService from '@deepseek-ai/dsh-user-approval'
import { execTool, makeTmpDir, removeTmpDir, runTurn, textOf, textTurn, toolResults, toolTurn, type Host } from '@gencode-ai/testkit'
import { listDirHost, makeTree } from './harness.ts'

let host: Host | undefined
const dirs: string[] = []
afterEach(async () => {
  await host?.dispose()
  host = undefined
  for (const dir of dirs.splice(0)) await removeTmpDir(dir)
})

async function workspace(tree: Parameters<typeof makeTree>[1]): Promise<string> {
  const dir = await makeTmpDir('ws-')
  dirs.push(dir)
  await makeTree(dir, tree)
  return dir
}

/** One scripted model turn calling list_directory with `args`, then a text answer; returns the tool result. */
async function callThroughAgent(h: Host, sessionCwd: string, args: unknown) {
  h.adapter.requests.length = 0
  const script = [toolTurn({ id: 'call-1', name: 'list_directory', args }), textTurn('done')]
  ;(h.adapter as unknown as { script: unknown[] }).script.push(...script)
  const events = await runTurn(h.ctx, h.agent(sessionCwd))
  const [result] = toolResults(events)
  return result!
}

describe('the workspace of a call', () => {
  it('a relative path resolves against the calling session cwd, not the provider cwd', async () => {
    host = await listDirHost()
    await makeTree(host.cwd, { 'provider-only.txt': '' })
    const session = await workspace({ 'session-only.txt': 'abc' })
    const result = await callThroughAgent(host, session, { path: '.' })
    expect(result.isError).toBe(false)
    expect(result.text).toContain(`Listed 1 item in ${session}:`)
    expect(result.text).toContain('session-only.txt')
  })

  it('the model is offered the tool with its guidance section', async () => {
    host = await listDirHost()
    await callThroughAgent(host, host.cwd, { path: '.' })
    const request = host.adapter.requests[0]!
    expect(request.tools?.map((tool) => tool.name)).toContain('list_directory')
    expect(JSON.stringify(request)).toContain('Use the list_directory tool — not shell commands like ls — to browse directory structures.')
  })

  it('a call with no agent uses the provider cwd', async () => {
    host = await listDirHost()
    await makeTree(host.cwd, { 'here.txt': '' })
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: '.' }))).toContain('here.txt')
  })

  it('with a sandbox policy composed, its workspace root decides', async () => {
    const root = await workspace({ 'policy-root.txt': '' })
    host = await listDirHost({}, {})
    await host.ctx.plugin(SandboxPolicy, { workspaceRoot: root })
    const text = textOf(await execTool(host.ctx, 'list_directory', { path: '.' }))
    expect(text).toContain(`in ${root}:`)
    expect(text).toContain('policy-root.txt')
  })
})

describe('paths outside the workspace (default outsideWorkspace: ask, no approval service composed)', () => {
  const escapes: [string, (ws: string, outside: string) => Promise<string>][] = [
    ['an absolute path', async (_ws, outside) => outside],
    ['a ../ chain', async (ws, outside) => join('..', '..', '..', '..', '..', '..', outside)],
    ['a parent of the workspace', async () => '..'],
    ['a symlink inside pointing out', async (ws, outside) => { await symlink(outside, join(ws, 'out-link')); return 'out-link' }],
    ['a path under a symlinked parent', async (ws, outside) => { await symlink(outside, join(ws, 'parent-link')); return 'parent-link/sub' }],
    ['a chain of symlinks', async (ws, outside) => {
      await symlink(outside, join(ws, 'hop2'))
      await symlink('hop2', join(ws, 'hop1'))
      return 'hop1'
    }],
  ]
  for (const [label, make] of escapes) {
    it(`refuses ${label} through the agent loop`, async () => {
      host = await listDirHost()
      const outside = await workspace({ 'secret.txt': 'x', 'sub/inner.txt': 'y' })
      const ws = await workspace({ 'inside.txt': '' })
      const path = await make(ws, outside)
      const result = await callThroughAgent(host, ws, { path })
      expect(result.isError).toBe(true)
      expect(result.text).toContain(`path ${JSON.stringify(path)} is outside the workspace ${ws}`)
      expect(result.text).not.toContain('secret.txt')
      expect(result.text).not.toContain('inner.txt')
    })
  }

  it('a directory swapped for a symlink out after the check is refused at use', async () => {
    host = await listDirHost()
    const outside = await workspace({ 'secret.txt': '' })
    const ws = await workspace({ 'swap/ok.txt': '' })
    host.ctx.on('tools/execute', async (_exec, next) => {
      await rename(join(ws, 'swap'), join(ws, 'swap-old'))
      await symlink(outside, join(ws, 'swap'))
      return next()
    })
    const result = await callThroughAgent(host, ws, { path: 'swap' })
    expect(result.text).toBe(`Error: path "swap" is outside the workspace ${ws} (it resolves to ${outside}); it changed after the check — list a path inside the workspace`)
  })

  it('a symlink that stays inside is fine', async () => {
    host = await listDirHost()
    const ws = await workspace({ 'real/a.txt': '' })
    await symlink('real', join(ws, 'alias'))
    const result = await callThroughAgent(host, ws, { path: 'alias' })
    expect(result.isError).toBe(false)
    expect(result.text).toContain('a.txt')
  })

  it('outsideWorkspace: allow lists it; deny refuses it with the reason', async () => {
    const outside = await workspace({ 'open.txt': '' })
    host = await listDirHost({ outsideWorkspace: 'allow' })
    expect((await callThroughAgent(host, host.cwd, { path: outside })).text).toContain('open.txt')
    await host.dispose()
    host = await listDirHost({ outsideWorkspace: 'deny' })
    const denied = await callThroughAgent(host, host.cwd, { path: outside })
    expect(denied.isError).toBe(true)
    expect(denied.text).toBe(`Error: path "${outside}" is outside the workspace ${host.cwd} (outsideWorkspace: deny) — list a path inside the workspace`)
  })

  it('with an approval service composed, the user is asked; approving lists, rejecting refuses', async () => {
    host = await listDirHost()
    await host.ctx.plugin(ApprovalService, { policy: 'ask' })
    const outside = await workspace({ 'approved.txt': '' })
    const asked: string[] = []
    let answer: 'allowed-once' | 'rejected' = 'allowed-once'
    // What a UI does: answer the host's approval request.
    host.ctx.on('approval/request', async (request) => {
      asked.push(`${request.toolName}: ${request.reason}`)
      return answer
    })
    const approved = await callThroughAgent(host, host.cwd, { path: outside })
    expect(asked).toEqual([`list_directory: path "${outside}" is outside the workspace ${host.cwd}`])
    expect(approved.text).toContain('approved.txt')
    answer = 'rejected'
    const rejected = await callThroughAgent(host, host.cwd, { path: outside })
    expect(rejected.isError).toBe(true)
    expect(rejected.text).not.toContain('approved.txt')
    // Inside the workspace nothing is asked.
    await callThroughAgent(host, host.cwd, { path: '.' })
    expect(asked).toHaveLength(2)
  })
})
