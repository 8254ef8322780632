import { readFileSync } from 'node:fs'
import { afterEach, expect, it } from 'vitest'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import { JobId } from '@deepseek-ai/dsh-jobs'
import { execTool } from '@gencode-ai/testkit'
import { bootKs, groupPids, marker, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

it('in the product-like composition (sandbox runner, workspace-write, job controller) kill_shell stops every confined process', async () => {
  host = await bootKs({
    jobs: true,
    before: async (h) => {
      await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
      await h.ctx.plugin(LocalSandboxProvider, {})
    },
  })
  const agent = host.agent()
  const mark = marker('sandboxed')
  const bg = await startBg(host, `trap '' TERM; (exec -a ${mark} sleep 60) & (bash -c 'exec -a ${mark} sleep 60') & exec -a ${mark} sleep 60`, agent)
  await until(() => pidsWithArgv0(mark).length === 3, 'three confined processes')
  for (const pid of pidsWithArgv0(mark)) expect(readFileSync(`/proc/${pid}/status`, 'utf8')).toMatch(/NoNewPrivs:\s+1/)
  const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 200 }, { agent })
  expect(result.value).toMatchObject({ success: true, outcome: 'force-killed', force_killed: true, survivors: [] })
  expect(pidsWithArgv0(mark)).toEqual([])
  expect(groupPids(bg.pid)).toEqual([])
  expect(host.ctx.jobs.get(JobId(bg.job_id as string), agent)).toMatchObject({ status: 'killed', reported: true })
})
