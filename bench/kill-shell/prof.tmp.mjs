import { CallId } from '@deepseek-ai/dsh-llm'
import LocalSandbox from '@deepseek-ai/dsh-sandbox-local'
import { bootServices } from '@gencode-ai/testkit'
import * as BashBg from '@gencode-ai/dsh-tool-bash-bg'
import * as KillShell from '@gencode-ai/dsh-tool-kill-shell'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { SessionId } from '@deepseek-ai/dsh-session'
import { ProcessGroup } from '../../packages/tool-bash-bg/dist/process-group.js'
import { BackgroundShell } from '../../packages/tool-bash-bg/dist/background.js'
const sleep = (t) => new Promise((r) => setTimeout(r, t))
const keep = setInterval(() => {}, 1000)
const marks = {}
let t0 = 0n
const mark = (k) => { (marks[k] ??= []).push(Number(process.hrtime.bigint() - t0) / 1e6) }
const wrap = (proto, name, label) => { const f = proto[name]; proto[name] = function (...a) { const r = f.apply(this, a); if (r && typeof r.then === 'function') return r.then((v) => { mark(label); return v }); mark(label); return r } }
wrap(ProcessGroup.prototype, 'census', 'census-end')
wrap(ProcessGroup.prototype, 'terminate', 'group.terminate')
wrap(BackgroundShell.prototype, 'terminate', 'shell.terminate')
const ctx = await bootServices({ cwd: process.cwd(), sandbox: 'workspace-write' })
await ctx.plugin(LocalSandbox, {})
await ctx.plugin(ToolJobs, { completionDelivery: 'quiet' })
await ctx.plugin(BashBg, { maxEntries: 1000 })
await ctx.plugin(KillShell, {})
while (ctx.tools.get('kill_shell') === undefined) await sleep(5)
const agent = ctx.agentLoop.create(SessionId('bench'), { provider: 'none', model: 'none' }, { cwd: process.cwd() })
let seq = 0
const call = (name, args) => ctx.tools.execute({ callId: CallId(`b${++seq}`), name, arguments: args, signal: new AbortController().signal, agent })
const shells = ctx.get('backgroundShells')
const wrapObj = (o, name, label) => { const f = o[name].bind(o); o[name] = (...a) => { mark(label + '-start'); const r = f(...a); return r.then ? r.then((v) => { mark(label); return v }) : r } }
wrapObj(shells, 'stop', 'registry.stop')
for (let i = 0; i < 15; i++) {
  const r = await call('bash_bg', { command: 'sleep 60 & sleep 60 & wait', run_in_background: true })
  await sleep(30)
  const shell = r.value.shell_id
  const g = [...shells.shells.values()].find((s) => s.record.id === shell).processes
  void g.exited.then(() => mark('leader-exit'))
  t0 = process.hrtime.bigint()
  await call('kill_shell', { shell_id: shell })
  mark('tool-result')
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
for (const [k, v] of Object.entries(marks)) console.log(k.padEnd(18), 'n', String(v.length).padStart(3), 'median', med(v).toFixed(2))
await ctx.fiber.dispose(); clearInterval(keep)
