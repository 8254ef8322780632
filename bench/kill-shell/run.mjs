// bench/kill-shell: kill_shell on the real host in the composition dsh mounts (dsh-sandbox-policy
// workspace-write, dsh-fs-sandbox, dsh-sandbox-local: each shell runs under the sandbox runner), as
// ratios to baselines measured in the same run.
//   node bench/kill-shell/run.mjs        (needs the built packages: npx -y pnpm@9.15.9 run -s build)
// 1. cooperative 3-process shell (`sleep 60 & sleep 60 & wait`, exits on SIGTERM): kill_shell's
//    return time (its marker scan for escapees included) vs a bare `kill -TERM -<pgid>`
//    plus waiting until /proc shows the group gone, zombies aside (the guarantee kill_shell
//    reports; kill(-pgid, 0) would wait for init to reap the orphaned children instead).
//    (median of ROUNDS, ratio; target <= 1.5x).
//    Breakdown: a no-op tool through the same tool pipeline (the host's fixed cost per call), and
//    the registry's terminate alone (tool-bash-bg's part).
// 2. a shell that ignores SIGTERM, timeout T: kill_shell's return time minus T (the escalation overhead)
// 3. a shell with 20 descendants: survivors reported by kill_shell and found in /proc (must be 0)
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { CallId } from '@deepseek-ai/dsh-llm'
import { registerNoop } from '../noop.mjs'
import LocalSandbox from '@deepseek-ai/dsh-sandbox-local'
import { bootServices } from '@gencode-ai/testkit'
import * as BashBg from '@gencode-ai/dsh-tool-bash-bg'
import * as KillShell from '@gencode-ai/dsh-tool-kill-shell'

const ROUNDS = Number(process.env.ROUNDS ?? 25)
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (ns) => Number(ns) / 1e6
const sleep = (t) => new Promise((resolve) => setTimeout(resolve, t))
const COOPERATIVE = 'sleep 60 & sleep 60 & wait'

// Background shells never hold the host open (by design), so the bench holds itself open.
const keepAlive = setInterval(() => {}, 1000)

/** Live, non-zombie members of a process group, from /proc. */
function groupPids(pgid) {
  const found = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'latin1').split(') ')[1].split(' ')
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') found.push(Number(entry))
    } catch {
      // gone while we looked
    }
  }
  return found
}

const ctx = await bootServices({ cwd: process.cwd(), sandbox: 'workspace-write' })
await ctx.plugin(LocalSandbox, {})
await ctx.plugin(BashBg, { maxEntries: 1000 })
await ctx.plugin(KillShell, {})
while (ctx.tools.get('kill_shell') === undefined) await sleep(5)
const shells = ctx.get('backgroundShells')
registerNoop(ctx)
let seq = 0
const call = (name, args) => ctx.tools.execute({ callId: CallId(`b${++seq}`), name, arguments: args, signal: new AbortController().signal })
async function start(command) {
  const result = await call('bash_bg', { command, run_in_background: true })
  if (result.isError) throw new Error(result.content[0].text)
  // Let the command get going (same settling time as the baseline gets).
  await sleep(30)
  return result.value
}

/** The baselines: a detached group, then kill -TERM -pgid, the leader's exit, and the group gone. */
async function bareKill() {
  const child = spawn('bash', ['-c', COOPERATIVE], { detached: true, stdio: 'ignore' })
  await new Promise((resolve) => child.once('spawn', resolve))
  await sleep(30)
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const t = process.hrtime.bigint()
  process.kill(-child.pid, 'SIGTERM')
  await exited
  while (groupPids(child.pid).length > 0) await sleep(1)
  return ms(process.hrtime.bigint() - t)
}

async function terminateOnly() {
  const bg = await start(COOPERATIVE)
  const t = process.hrtime.bigint()
  await shells.stop(bg.shell_id, { signal: 'SIGTERM', force: true, timeoutMs: 5000 }, undefined)
  return ms(process.hrtime.bigint() - t)
}

async function noop() {
  const t = process.hrtime.bigint()
  await call('bench_noop', {})
  return ms(process.hrtime.bigint() - t)
}

async function killShell() {
  const bg = await start(COOPERATIVE)
  const t = process.hrtime.bigint()
  const result = await call('kill_shell', { shell_id: bg.shell_id })
  const elapsed = ms(process.hrtime.bigint() - t)
  if (result.isError || !result.value.success || groupPids(bg.pid).length > 0) throw new Error(`kill_shell failed: ${result.content[0].text}`)
  return elapsed
}

const bare = []
const ours = []
const floor = []
const registryOnly = []
for (let i = 0; i < ROUNDS; i++) {
  bare.push(await bareKill())
  ours.push(await killShell())
  floor.push(await noop())
  registryOnly.push(await terminateOnly())
}
const mine = median(ours)
console.log('product composition (sandbox policy workspace-write, dsh-fs-sandbox, dsh-sandbox-local runner)')
console.log(`1. cooperative 3-process shell (median of ${ROUNDS}): kill_shell ${mine.toFixed(2)} ms`)
console.log(`   bare kill -TERM -pgid + wait until /proc shows the group gone: ${median(bare).toFixed(2)} ms, ratio ${(mine / median(bare)).toFixed(2)}x (target <= 1.5x)`)
console.log(`   breakdown: no-op tool call ${median(floor).toFixed(2)} ms, registry.stop alone ${median(registryOnly).toFixed(2)} ms (it ends on a fresh /proc census, marker scan included)`)

const T = 1000
{
  const bg = await start("trap '' TERM; sleep 60")
  const t = process.hrtime.bigint()
  const result = await call('kill_shell', { shell_id: bg.shell_id, timeout: T })
  const elapsed = ms(process.hrtime.bigint() - t)
  console.log(`2. SIGTERM-ignoring shell, timeout ${T} ms: returned after ${elapsed.toFixed(0)} ms, overhead ${(elapsed - T).toFixed(0)} ms (force_killed: ${result.value.force_killed}, survivors: ${result.value.survivors.length})`)
}

{
  const bg = await start('for i in $(seq 20); do sleep 60 & done; wait')
  while (groupPids(bg.pid).length < 21) await sleep(10)
  const before = groupPids(bg.pid).length
  const result = await call('kill_shell', { shell_id: bg.shell_id })
  console.log(`3. shell with ${before - 1} descendants: survivors reported ${result.value.survivors.length}, left in /proc ${groupPids(bg.pid).length} (must be 0), ${result.value.elapsed_ms} ms`)
}

await ctx.fiber.dispose()
clearInterval(keepAlive)
