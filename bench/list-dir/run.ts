/**
 * bench/list-dir: list_directory on a generated 100,500-entry directory, against the host's
 * ctx.fs.listDir path and GNU `ls -l`, as ratios measured in the same run.
 *   npx tsx bench/list-dir/run.ts [entries]
 */
import '../../packages/testkit/src/polyfill.ts'
import { execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool, removeTmpDir, makeTmpDir } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/src/index.ts'

const entries = Number(process.argv[2] ?? 100_500)

async function time(label: string, runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn() // warm-up
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  console.log(`${label.padEnd(44)} ${median.toFixed(1).padStart(9)} ms (median of ${runs})`)
  return median
}

const dir = await makeTmpDir('bench-list-')
const big = join(dir, 'big')
await mkdir(big)
for (let i = 0; i < 500; i++) await mkdir(join(big, `dir${String(i).padStart(4, '0')}`))
const files = entries - 500
for (let start = 0; start < files; start += 2000) {
  await Promise.all(Array.from({ length: Math.min(2000, files - start) }, (_, k) => writeFile(join(big, `file${String(start + k).padStart(6, '0')}.txt`), 'x'.repeat((start + k) % 97))))
}
console.log(`bench/list-dir: ${entries} entries in ${big}`)

const host = await bootHost({ cwd: dir })
await host.ctx.plugin(ListDir, {})
const target = await host.ctx.fs.resolve(big)

const ours = await time('list_directory (default args)', 7, async () => {
  const result = await execTool(host.ctx, 'list_directory', { path: 'big' })
  if (result.isError) throw new Error('list_directory failed')
})
const ourLong = await time('list_directory long=true', 5, () => execTool(host.ctx, 'list_directory', { path: 'big', long: true }))
const ourSorted = await time('list_directory sort=size (stats every entry)', 3, () => execTool(host.ctx, 'list_directory', { path: 'big', sort: 'size' }))
const provider = await time('ctx.fs.listDir (host path)', 1, () => host.ctx.fs.listDir(target))
const lsl = await time('ls -l > /dev/null', 5, () => execFileSync('ls', ['-l', big], { stdio: ['ignore', 'ignore', 'ignore'] }))
const lsf = await time('ls -f > /dev/null', 5, () => execFileSync('ls', ['-f', big], { stdio: ['ignore', 'ignore', 'ignore'] }))

const sandboxed = await bootHost({ cwd: dir, sandbox: 'workspace-write' })
await sandboxed.ctx.plugin(ListDir, {})
const viaProvider = await time('list_directory under dsh-fs-sandbox (ctx.fs)', 1, () => execTool(sandboxed.ctx, 'list_directory', { path: 'big' }))

console.log('')
console.log(`speed-up vs ctx.fs.listDir:      ${(provider / ours).toFixed(1)}x   (target >= 20x)`)
console.log(`ratio to ls -l:                  ${(ours / lsl).toFixed(2)}   (target <= 1.00)`)
console.log(`ratio to ls -f:                  ${(ours / lsf).toFixed(2)}`)
console.log(`long=true ratio to ls -l:        ${(ourLong / lsl).toFixed(2)}`)
console.log(`sort=size ratio to ls -l:        ${(ourSorted / lsl).toFixed(2)}`)
console.log(`sandboxed (ctx.fs) vs fast path: ${(viaProvider / ours).toFixed(1)}x slower`)

await sandboxed.dispose()
await host.dispose()
await removeTmpDir(dir)
