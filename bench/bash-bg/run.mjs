// bench/bash-bg: bash_bg on the real host, as ratios to baselines measured in the same run.
//   node bench/bash-bg/run.mjs            (needs the built package: npx -y pnpm@9.15.9 run -s build)
// 1. launch latency: bash_bg run_in_background call -> shell_id, vs a bare detached spawn -> 'spawn'
// 2. log capture: a command writing 1 GiB, bash_bg (until settled) vs `cmd > file` in bash
// 3. cap: a 10 GiB writer under the default 64 MiB cap: final log size, and that it finishes
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CallId } from '@deepseek-ai/dsh-llm'
import { bootServices } from '@gencode-ai/testkit'
import * as BashBg from '@gencode-ai/dsh-tool-bash-bg'

const GiB = 1024 ** 3
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const ms = (ns) => Number(ns) / 1e6

// Background shells never hold the host open (by design), so the bench holds itself open.
const keepAlive = setInterval(() => {}, 1000)

async function boot(config) {
  const ctx = await bootServices({ cwd: process.cwd() })
  await ctx.plugin(BashBg, { maxEntries: 1000, ...config })
  let seq = 0
  const call = (args) => ctx.tools.execute({ callId: CallId(`b${++seq}`), name: 'bash_bg', arguments: args, signal: new AbortController().signal })
  return { ctx, shells: ctx.get('backgroundShells'), call }
}
const { ctx, shells, call } = await boot({})

async function bareSpawn() {
  const t = process.hrtime.bigint()
  const child = spawn('bash', ['-c', 'sleep 5'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  await new Promise((resolve) => child.once('spawn', resolve))
  const elapsed = ms(process.hrtime.bigint() - t)
  process.kill(-child.pid, 'SIGKILL')
  return elapsed
}

async function bgLaunch() {
  const t = process.hrtime.bigint()
  const result = await call({ command: 'sleep 5', run_in_background: true })
  const elapsed = ms(process.hrtime.bigint() - t)
  await shells.terminate(result.value.shell_id, { signal: 'SIGKILL', force: true, timeoutMs: 1000 })
  return elapsed
}

const ROUNDS = 25
const bare = []
const bg = []
for (let i = 0; i < ROUNDS; i++) {
  bare.push(await bareSpawn())
  bg.push(await bgLaunch())
}
console.log(`launch latency (median of ${ROUNDS}): bash_bg ${median(bg).toFixed(2)} ms, bare spawn ${median(bare).toFixed(2)} ms, ratio ${(median(bg) / median(bare)).toFixed(2)}x`)

const dir = mkdtempSync(join(tmpdir(), 'bench-bash-bg-'))
const writer = (bytes) => `head -c ${bytes} /dev/zero`
async function redirect(bytes) {
  const t = process.hrtime.bigint()
  const child = spawn('bash', ['-c', `${writer(bytes)} > ${join(dir, 'redirect.out')}`], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  return ms(process.hrtime.bigint() - t)
}
async function captured(bytes, label) {
  const t = process.hrtime.bigint()
  const result = await call({ command: writer(bytes), run_in_background: true })
  const record = await shells.settled(result.value.shell_id)
  const elapsed = ms(process.hrtime.bigint() - t)
  const size = statSync(record.output_file).size
  if (label !== undefined) console.log(`${label}: ${elapsed.toFixed(0)} ms, log ${size} bytes (capped: ${record.capped}), status ${record.status}`)
  return { elapsed, size, record }
}

const base = await redirect(GiB)
const { elapsed: cap1 } = await captured(GiB, undefined)
console.log(`1 GiB capture: bash_bg ${cap1.toFixed(0)} ms (log capped at 64 MiB, the pipe drained to the end), redirect ${base.toFixed(0)} ms, ratio ${(cap1 / base).toFixed(2)}x`)
await captured(10 * GiB, '10 GiB writer, 64 MiB cap')
await ctx.fiber.dispose()

// Full capture (cap above 1 GiB): the throughput of the log path itself.
const uncapped = await boot({ maxLogBytes: 2 * GiB })
// Measured again right before: 10 GiB of page-cache traffic since the first baseline skews it.
const base2 = await redirect(GiB)
const t = process.hrtime.bigint()
const result = await uncapped.call({ command: writer(GiB), run_in_background: true })
const record = await uncapped.shells.settled(result.value.shell_id)
const full = ms(process.hrtime.bigint() - t)
console.log(`1 GiB capture, whole log kept: bash_bg ${full.toFixed(0)} ms (log ${statSync(record.output_file).size} bytes), redirect ${base2.toFixed(0)} ms, ratio ${(full / base2).toFixed(2)}x`)
await uncapped.ctx.fiber.dispose()
rmSync(dir, { recursive: true, force: true })
clearInterval(keepAlive)
