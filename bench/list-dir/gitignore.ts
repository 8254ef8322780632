/**
 * bench/list-dir gitignore: what .gitignore handling costs a recursive listing. A generated git
 * repository of ~50,000 files with a root and nested .gitignore files whose rules hide little
 * (`*.log`, one `build/`): `recursive, depth 3` against the same call with `all: true`, on the
 * product composition (dsh-sandbox-policy workspace-write + dsh-fs-sandbox), ratio in one run;
 * the bare dsh-fs-local figure beside it.
 *   npx tsx bench/list-dir/gitignore.ts [files]
 */
import '../../packages/testkit/src/polyfill.ts'
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool, removeTmpDir, makeTmpDir, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/src/index.ts'

const files = Number(process.argv[2] ?? 50_000)
const PACKAGES = 20
const DIRS = 10
const perDir = Math.ceil(files / (PACKAGES * DIRS))

interface Cost { wall: number, cpu: number }

const median = (list: number[]): number => list.sort((x, y) => x - y)[Math.floor(list.length / 2)]!

/**
 * Medians of `runs` alternating calls (A, B, A, B, …) after a warm-up of each, so drift hits both
 * alike: wall-clock, and this process's CPU time (all its threads: the fs work included), which
 * other load on a shared machine does not inflate.
 */
async function alternate(runs: number, a: () => Promise<unknown>, b: () => Promise<unknown>): Promise<[Cost, Cost]> {
  await a()
  await b()
  const samples = [{ wall: [] as number[], cpu: [] as number[] }, { wall: [] as number[], cpu: [] as number[] }]
  for (let i = 0; i < runs; i++) {
    for (const [index, fn] of [a, b].entries()) {
      const start = performance.now()
      const cpu = process.cpuUsage()
      await fn()
      const used = process.cpuUsage(cpu)
      samples[index]!.wall.push(performance.now() - start)
      samples[index]!.cpu.push((used.user + used.system) / 1000)
    }
  }
  return samples.map((sample) => ({ wall: median(sample.wall), cpu: median(sample.cpu) })) as [Cost, Cost]
}

const repo = await makeTmpDir('bench-gitignore-')
execFileSync('git', ['init', '-q'], { cwd: repo })
await writeFile(join(repo, '.gitignore'), '*.log\nbuild/\n')
await mkdir(join(repo, 'build'))
await writeFile(join(repo, 'build/out.js'), 'x')
let made = 0
for (let p = 0; p < PACKAGES; p++) {
  const pkg = join(repo, `pkg${String(p).padStart(2, '0')}`)
  await mkdir(pkg)
  await writeFile(join(pkg, '.gitignore'), '*.tmp\n!keep.tmp\n')
  for (let d = 0; d < DIRS; d++) {
    const dir = join(pkg, `dir${d}`)
    await mkdir(dir)
    // Unique names (no matcher cache flatters the figure); one file in fifty is ignored: rules that hide little.
    await Promise.all(Array.from({ length: perDir }, (_, f) => writeFile(join(dir, `m${p}_${d}_${f}${f % 50 === 0 ? '.log' : f % 50 === 25 ? '.tmp' : '.ts'}`), '')))
    made += perDir
  }
}
console.log(`bench/list-dir gitignore: ${made} files in a git repository (${PACKAGES} packages × ${DIRS} dirs × ${perDir}) at ${repo}`)

const args = { path: '.', recursive: true, depth: 3 }
async function measure(host: Host, label: string, runs: number): Promise<number> {
  const check = await execTool(host.ctx, 'list_directory', args)
  if (check.isError || !JSON.stringify(check.value).includes('"gitignored"')) throw new Error(`${label}: no gitignore handling in the result`)
  const [withRules, all] = await alternate(
    runs,
    () => execTool(host.ctx, 'list_directory', args),
    () => execTool(host.ctx, 'list_directory', { ...args, all: true }),
  )
  const show = (what: string, cost: Cost) => console.log(
    `${`${label}: ${what}`.padEnd(56)} ${cost.wall.toFixed(1).padStart(9)} ms wall ${cost.cpu.toFixed(1).padStart(9)} ms CPU (medians of ${runs})`,
  )
  show('recursive depth 3', withRules)
  show('recursive depth 3, all: true', all)
  const cpu = withRules.cpu / all.cpu
  console.log(`${label}: gitignore handling / all: true = ${cpu.toFixed(2)} CPU, ${(withRules.wall / all.wall).toFixed(2)} wall   (target <= 1.30)`)
  return cpu
}

const sandboxed = await bootHost({ cwd: repo, sandbox: 'workspace-write' })
await sandboxed.ctx.plugin(ListDir, {})
const product = await measure(sandboxed, 'dsh-fs-sandbox (product)', 15)
await sandboxed.dispose()

const local = await bootHost({ cwd: repo })
await local.ctx.plugin(ListDir, {})
await measure(local, 'dsh-fs-local', 15)
await local.dispose()

await removeTmpDir(repo)
if (product > 1.3) {
  console.log('FAIL: gitignore handling costs more than 1.3x (CPU) on the product composition')
  process.exitCode = 1
}
