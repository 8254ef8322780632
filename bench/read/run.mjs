// read_file bench: a generated 1 GiB text file (temp dir, deleted after). Reports ratios against
// head and sed measured in the same run, and the RSS growth of each read.
// Usage: node --expose-gc bench/read/run.mjs   (needs the built package: npx tsc -b packages/tool-read)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, openSync, writeSync, closeSync, rmSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { CallId } from '@deepseek-ai/dsh-llm'
import SessionStore from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import SandboxedFileSystem from '@deepseek-ai/dsh-fs-sandbox'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import * as Read from '../../packages/tool-read/dist/index.js'

const SIZE = Number(process.env.READ_BENCH_BYTES ?? 1024 ** 3)
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'read-bench-')))
const file = join(dir, 'big.txt')

function generate() {
  const fd = openSync(file, 'w')
  let line = 0
  let written = 0
  while (written < SIZE) {
    let chunk = ''
    for (let i = 0; i < 20000; i++) chunk += `line ${++line} lorem ipsum dolor ${(line * 7919) % 100000}\n`
    written += writeSync(fd, chunk)
  }
  closeSync(fd)
  return line
}

async function host(sandboxed) {
  const ctx = new Context()
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(SessionStore)
  await ctx.plugin(SystemPrompt, { persona: '' })
  await ctx.plugin(ToolRuntime, {})
  await ctx.plugin(AgentRegistry)
  if (sandboxed) {
    await ctx.plugin(SandboxPolicy, { mode: 'workspace-write', workspaceRoot: dir })
    await ctx.plugin(SandboxedFileSystem, { cwd: dir })
  } else {
    await ctx.plugin(LocalFileSystem, { cwd: dir })
  }
  await ctx.plugin(Read, {})
  return ctx
}

let seq = 0
async function read(ctx, args) {
  const result = await ctx.tools.execute({ callId: CallId(`b${++seq}`), name: 'read_file', arguments: { file_path: file, ...args }, signal: new AbortController().signal })
  if (result.isError) throw new Error(JSON.stringify(result.content))
  return result
}

const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]

/**
 * The baseline command and the read, run alternately (so load from other processes hits both
 * alike): median wall times, and the peak RSS growth over the reads.
 */
async function pair(cmd, args, fn, runs) {
  const base = [], ours = []
  globalThis.gc?.()
  const rss0 = process.memoryUsage().rss
  let peak = rss0
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 1)
  for (let i = 0; i < runs; i++) {
    let start = performance.now()
    const out = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] })
    if (out.status !== 0) throw new Error(`${cmd} failed`)
    base.push(performance.now() - start)
    start = performance.now()
    await fn()
    ours.push(performance.now() - start)
    peak = Math.max(peak, process.memoryUsage().rss)
  }
  clearInterval(sampler)
  return { base: median(base), ms: median(ours), rssMB: (peak - rss0) / 2 ** 20 }
}

try {
  const lines = generate()
  spawnSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] }) // warm the page cache for everyone
  const a = lines - 2100
  const b = a + 1999
  const local = await host(false)
  const sandboxed = await host(true)
  // Steady state of a long-lived host: let the JIT see the paths first (on other windows).
  for (let i = 0; i < 30; i++) {
    await read(local, { offset: 5001 + i })
    await read(sandboxed, { offset: 5001 + i })
  }

  const headArgs = ['-n', '2000', file]
  const sedArgs = ['-n', `${a},${b}p;${b}q`, file]
  const first = await pair('head', headArgs, () => read(local, {}), 9)
  const end = await pair('sed', sedArgs, () => read(local, { offset: a }), 5)
  const firstProvider = await pair('head', headArgs, () => read(sandboxed, {}), 9)
  const endProvider = await pair('sed', sedArgs, () => read(sandboxed, { offset: a }), 3)

  const check = await read(local, { offset: a })
  const shown = check.value.lines.length
  const row = (name, ms, base, rss, target) => `${name.padEnd(44)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(2).padStart(6)}x  rss +${rss.toFixed(1)} MB  (${target})`
  console.log(`file: ${(SIZE / 2 ** 30).toFixed(2)} GiB, ${lines} lines; window near the end: lines ${a}-${b} (${shown} shown)`)
  console.log(`head -n 2000: ${first.base.toFixed(1)} ms; sed -n '${a},${b}p;${b}q': ${end.base.toFixed(1)} ms`)
  console.log(row('read_file first 2000 lines / head', first.ms, first.base, first.rssMB, 'target <= 3x'))
  console.log(row('read_file window near the end / sed', end.ms, end.base, end.rssMB, 'target <= 1x'))
  console.log(row('  provider path (fs-sandbox) first / head', firstProvider.ms, firstProvider.base, firstProvider.rssMB, 'product composition'))
  console.log(row('  provider path (fs-sandbox) end / sed', endProvider.ms, endProvider.base, endProvider.rssMB, 'product composition'))
  await local.fiber.dispose()
  await sandboxed.fiber.dispose()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
