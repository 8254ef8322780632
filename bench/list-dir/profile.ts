/**
 * bench/list-dir profile: one workload to CPU-profile, the recursive depth-3 call on the product composition (the tree
 * of bench/list-dir: a git repository, 500 directories of 100 files, or `dirs`x`files` for another shape), `calls` times.
 * With PROFILE=<file> the calls alone (not the tree's creation) are CPU-profiled into that file (.cpuprofile, Chrome's format).
 *   PROFILE=/tmp/list.cpuprofile npx tsx bench/list-dir/profile.ts [calls] [dirs] [files]
 */
import '../../packages/testkit/src/polyfill.ts'
import { mkdir, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool, makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/dist/index.js'

const calls = Number(process.argv[2] ?? 50)
const dirs = Number(process.argv[3] ?? 500)
const files = Number(process.argv[4] ?? 100)
const dir = await makeTmpDir('bench-profile-')
const tree = join(dir, 'tree')
await mkdir(join(tree, '.git'), { recursive: true })
await writeFile(join(tree, '.gitignore'), '*.log\ncoverage/\n/build\n')
const tops = Math.max(1, Math.round(Math.sqrt(dirs / 1.25)))
for (let d = 0; d < dirs; d++) {
  const sub = join(tree, `pkg${d % tops}`, `mod${Math.floor(d / tops)}`)
  await mkdir(sub, { recursive: true })
  await Promise.all(Array.from({ length: files }, (_, i) => writeFile(join(sub, `f${i}.ts`), 'x'.repeat(i % 97))))
}
for (let a = 0; a < tops; a += 5) await writeFile(join(tree, `pkg${a}`, '.gitignore'), 'dist/\n*.snap\n')

const host = await bootHost({ cwd: dir, sandbox: 'workspace-write' })
await host.ctx.plugin(ListDir, {})
const agent = host.agent(dir)
const session = new Session()
if (process.env.PROFILE !== undefined) {
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 100 })
  await session.post('Profiler.start')
}
const times: number[] = []
for (let i = 0; i < calls; i++) {
  const start = performance.now()
  const result = await execTool(host.ctx, 'list_directory', { path: 'tree', recursive: true, depth: 3 }, { agent })
  times.push(performance.now() - start)
  if (result.isError) throw new Error(JSON.stringify(result.error))
}
if (process.env.PROFILE !== undefined) {
  const { profile } = await session.post('Profiler.stop')
  await writeFile(process.env.PROFILE, JSON.stringify(profile))
  session.disconnect()
}
const first = times[0] ?? Number.NaN
times.sort((a, b) => a - b)
console.log(`${calls} calls, ${dirs} directories x ${files} files: median ${times[Math.floor(calls / 2)]?.toFixed(1)} ms, first ${first.toFixed(1)}`)
await host.dispose()
await removeTmpDir(dir)
