// read_file bench: a generated 1 GiB text file (temp dir, deleted after). Reports ratios against
// head and sed measured in the same run, and the RSS growth of each read: first on the composition
// dsh mounts (dsh-sandbox-policy workspace-write + dsh-fs-sandbox), beside the first-party `read`
// (dsh-tool-fs) on the same host; then on the bare dsh-fs-local.
// Usage: node --expose-gc bench/read/run.mjs   (needs the built package: npx tsc -b packages/tool-read)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, openSync, writeSync, closeSync, rmSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CallId } from '@deepseek-ai/dsh-llm'
import * as ToolFs from '@deepseek-ai/dsh-tool-fs'
import { bootServices } from '@gencode-ai/testkit'
import { measure } from './measure.mjs'
import * as Read from '../../packages/tool-read/dist/index.js'

const SIZE = Number(process.env.READ_BENCH_BYTES ?? 1024 ** 3)
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'read-bench-')))
const file = join(dir, 'big.txt')

function row(name, { ms, rssMB }, base, target) {
  return `${name.padEnd(46)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(2).padStart(6)}x  rss +${rssMB.toFixed(1)} MB  (${target})`
}

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
  const ctx = await bootServices({ cwd: dir, ...sandboxed ? { sandbox: 'workspace-write' } : {} })
  // First-party read, with our byte budget (its default is 50 KiB) so both return the same window.
  if (sandboxed) await ctx.plugin(ToolFs, { readMaxBytes: 100 * 1024 })
  await ctx.plugin(Read, {})
  return ctx
}

let seq = 0
async function call(ctx, name, args) {
  const result = await ctx.tools.execute({ callId: CallId(`b${++seq}`), name, arguments: { file_path: file, ...args }, signal: new AbortController().signal })
  if (result.isError) throw new Error(JSON.stringify(result.content))
  return result
}
const read = (ctx, args) => call(ctx, 'read_file', args)
const firstParty = (ctx, args) => call(ctx, 'read', args)

/** The baseline command first, then each read, alternately (see measure.mjs). */
async function against(cmd, args, fns, runs) {
  const shell = () => {
    const out = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] })
    if (out.status !== 0) throw new Error(`${cmd} failed`)
  }
  const [base, ...results] = await measure([shell, ...fns], runs)
  return { base: base.ms, results }
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
  await firstParty(sandboxed, { offset: 5001 }) // its one loop runs 28M times: optimized within a call

  const headArgs = ['-n', '2000', file]
  const sedArgs = ['-n', `${a},${b}p;${b}q`, file]
  const first = await against('head', headArgs, [() => read(sandboxed, {}), () => read(local, {})], 9)
  const end = await against('sed', sedArgs, [() => read(sandboxed, { offset: a }), () => firstParty(sandboxed, { offset: a, limit: 2000 }), () => read(local, { offset: a })], 5)
  const firstFirstParty = await against('head', headArgs, [() => firstParty(sandboxed, { limit: 2000 })], 3)

  const check = await read(sandboxed, { offset: a })
  const shown = check.value.lines.length
  const theirs = await firstParty(sandboxed, { offset: a, limit: 2000 })
  if (theirs.value.lines.length !== shown) throw new Error(`first-party read showed ${theirs.value.lines.length} lines, read_file ${shown}: not the same window`)
  const [firstOurs, firstBare] = first.results
  const [endOurs, endTheirs, endBare] = end.results
  console.log(`file: ${(SIZE / 2 ** 30).toFixed(2)} GiB, ${lines} lines; window near the end: lines ${a}-${b} (${shown} shown, by both tools)`)
  console.log(`head -n 2000: ${first.base.toFixed(1)} ms; sed -n '${a},${b}p;${b}q': ${end.base.toFixed(1)} ms`)
  console.log('product composition (dsh-sandbox-policy workspace-write + dsh-fs-sandbox):')
  console.log(row('  read_file first 2000 lines / head', firstOurs, first.base, 'target <= 3x'))
  console.log(row('  read_file window near the end / sed', endOurs, end.base, 'target <= 1x'))
  console.log(row('  first-party read first 2000 lines / head', firstFirstParty.results[0], firstFirstParty.base, 'baseline'))
  console.log(row('  first-party read window near the end / sed', endTheirs, end.base, 'baseline'))
  console.log('bare dsh-fs-local, same run:')
  console.log(row('  read_file first 2000 lines / head', firstBare, first.base, ''))
  console.log(row('  read_file window near the end / sed', endBare, end.base, ''))
  await local.fiber.dispose()
  await sandboxed.fiber.dispose()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
