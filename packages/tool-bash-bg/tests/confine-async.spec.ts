// Host 0.1.6 makes ctx.sandbox.confine return a Promise (packages/sandbox/sandbox/src/index.ts at 0.1.7-rc.2):
// the real dsh-sandbox-local, its confine wrapped to answer asynchronously, must still confine both modes.
import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, type BgHost } from './harness.ts'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

const asyncConfine = () => bootBashBg({}, {
  before: async (h) => {
    await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
    await h.ctx.plugin(LocalSandboxProvider, {})
    const sandbox = h.ctx.get('sandbox')
    if (sandbox === undefined) throw new Error('no ctx.sandbox')
    const confine = sandbox.confine.bind(sandbox)
    const calls: number[] = []
    Object.assign(sandbox, {
      calls,
      confine: async (...args: Parameters<typeof confine>) => {
        calls.push(Date.now())
        await new Promise((resolve) => setTimeout(resolve, 5))
        return confine(...args)
      },
    })
  },
})

/** The Landlock runner sets no_new_privs before exec; the test process itself runs without it. */
const PROBE = 'grep NoNewPrivs /proc/self/status'

describe('ctx.sandbox.confine returning a Promise (host 0.1.6+)', () => {
  it('runs a foreground command confined', async () => {
    host = await asyncConfine()
    const agent = host.agent()
    const result = await execTool(host.ctx, 'bash_bg', { command: PROBE }, { agent })
    expect(result.isError).toBe(false)
    expect(textOf(result)).toMatch(/^NoNewPrivs:\s+1\n?$/)
    expect((host.ctx.get('sandbox') as unknown as { calls: number[] }).calls).toHaveLength(1)
    expect(await readFile(`/proc/${process.pid}/status`, 'utf8')).toMatch(/NoNewPrivs:\s+0/)
  })

  it('runs a background command confined', async () => {
    host = await asyncConfine()
    const agent = host.agent()
    const started = await execTool(host.ctx, 'bash_bg', { command: PROBE, run_in_background: true }, { agent })
    expect(started.isError).toBe(false)
    const value = started.value as unknown as { shell_id: string, output_file: string }
    expect(await host.shells.settled(value.shell_id)).toMatchObject({ status: 'completed', exit_code: 0 })
    expect(await readFile(value.output_file, 'utf8')).toMatch(/^NoNewPrivs:\s+1\n$/)
    expect((host.ctx.get('sandbox') as unknown as { calls: number[] }).calls).toHaveLength(1)
  })

  it('a confine that rejects is the call\'s error, and nothing runs', async () => {
    host = await asyncConfine()
    const sandbox = host.ctx.get('sandbox') as unknown as { confine: () => Promise<never> }
    sandbox.confine = () => Promise.reject(Object.assign(new Error('sandbox unavailable: no backend'), { code: 'SANDBOX_UNAVAILABLE' }))
    for (const run_in_background of [false, true]) {
      const result = await execTool(host.ctx, 'bash_bg', { command: 'echo ran', run_in_background }, { agent: host.agent() })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain('sandbox unavailable: no backend')
    }
    expect(host.shells.running()).toEqual([])
  })
})
