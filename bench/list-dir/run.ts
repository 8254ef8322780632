/**
 * bench/list-dir: list_directory on the composition dsh mounts (dsh-sandbox-policy workspace-write
 * + dsh-fs-sandbox), the bare dsh-fs-local beside it, against the host's ctx.fs.listDir path, GNU
 * `ls -l` and `find -maxdepth 3`, as ratios measured in the same run.
 *
 * What is timed is the user's call: the built plugin (dist, as dsh installs it, not this repo's
 * sources through tsx), called by an agent (its session decides the workspace, as in the agent loop),
 * the recursive tree a git repository with .gitignore files (as a user's checkout is), and besides
 * the warm median the first five calls of fresh hosts (a session lists a directory a few times, so
 * most calls a user makes run before the JIT has warmed up; each host is its own plain Node process).
 * `find` and `ls -l` are timed by a long-lived shell, as `time find …` measures them; timed by execFileSync from the
 * host they carry its spawn cost (6–13 ms a run, printed beside them), which flattered every ratio. A second tree,
 * 20,000 directories of two files, weighs the per-directory cost (an open, a stat, a readdir and a close each) that a
 * tree of few large directories hides.
 *   npx tsx bench/list-dir/run.ts [flat entries] [tree files] [small directories]
 */
import '../../packages/testkit/src/polyfill.ts'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { join } from 'node:path'
import { bootHost, execTool, removeTmpDir, makeTmpDir, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/dist/index.js'
import { SETTLED_MS } from '../../packages/tool-list-dir/src/walk/listing-cache.ts'
import { shellTimer } from '../shell-timer.ts'
import { alternate, time } from '../time.ts'

const entries = Number(process.argv[2] ?? 100_500)
const treeFiles = Number(process.argv[3] ?? 50_000)
const smallDirs = Number(process.argv[4] ?? 20_000)

async function makeFiles(dir: string, names: string[]): Promise<void> {
  for (let start = 0; start < names.length; start += 2000) {
    await Promise.all(names.slice(start, start + 2000).map((name, k) => writeFile(join(dir, name), 'x'.repeat((start + k) % 97))))
  }
}

const dir = await makeTmpDir('bench-list-')
const big = join(dir, 'big')
await mkdir(big)
for (let i = 0; i < 500; i++) await mkdir(join(big, `dir${String(i).padStart(4, '0')}`))
await makeFiles(big, Array.from({ length: entries - 500 }, (_, i) => `file${String(i).padStart(6, '0')}.txt`))
// A source-like tree: 20 top directories x 25 subdirectories, files spread evenly (depth 3).
const tree = join(dir, 'tree')
const perDir = Math.ceil(treeFiles / 500)
// A repository: the walk finds its root and applies its .gitignore files (rules that hide none of the tree's files).
await mkdir(join(tree, '.git'), { recursive: true })
await writeFile(join(tree, '.gitignore'), '*.log\ncoverage/\n/build\n')
for (let a = 0; a < 20; a++) {
  for (let b = 0; b < 25; b++) {
    const sub = join(tree, `pkg${a}`, `mod${b}`)
    await mkdir(sub, { recursive: true })
    await makeFiles(sub, Array.from({ length: perDir }, (_, i) => `f${i}.ts`))
  }
  if (a % 5 === 0) await writeFile(join(tree, `pkg${a}`, '.gitignore'), 'dist/\n*.snap\n')
}
// Many small directories: 20 top directories, each of `smallDirs / 20` holding two files (depth 3 reaches the files).
// Two files: a first call's cost apart from reading (the host's and the plugin's code run cold, the result checked).
const two = join(dir, 'two')
await mkdir(two)
await Promise.all([writeFile(join(two, 'a.ts'), 'a'), writeFile(join(two, 'b.md'), 'b')])
const small = join(dir, 'small')
await mkdir(join(small, '.git'), { recursive: true })
for (let a = 0; a < 20; a++) {
  const subs = Array.from({ length: Math.ceil(smallDirs / 20) }, (_, b) => join(small, `p${a}`, `m${b}`))
  for (let start = 0; start < subs.length; start += 500) {
    await Promise.all(subs.slice(start, start + 500).map(async (sub) => {
      await mkdir(sub, { recursive: true })
      await Promise.all([writeFile(join(sub, 'a.ts'), 'a'), writeFile(join(sub, 'b.md'), 'b')])
    }))
  }
}
const made = Date.now()
const load = (): string => loadavg().map((n) => n.toFixed(1)).join(' ')
console.log(`load average at the start ${load()} (1, 5, 15 min): the machine's other work slows runs unevenly`)
console.log(`bench/list-dir: ${entries} entries in one directory; ${20 * 25 * perDir} files in a depth-3 tree; ${20 * Math.ceil(smallDirs / 20)} directories of 2 files`)

async function listHost(sandbox: boolean, config = {}): Promise<Host> {
  const host = await bootHost({ cwd: dir, ...sandbox ? { sandbox: 'workspace-write' as const } : {} })
  await host.ctx.plugin(ListDir, config)
  return host
}
const product = await listHost(true)
const bare = await listHost(false)
// The product composition without the listing cache: every call reads every directory, as a host's first call does.
const uncached = await listHost(true, { cachedEntries: 0 })
const agents = new Map([product, bare, uncached].map((host) => [host, host.agent(dir)]))
const call = (host: Host, args: object) => async () => {
  const result = await execTool(host.ctx, 'list_directory', args, { agent: agents.get(host)! })
  if (result.isError) throw new Error(`list_directory failed: ${JSON.stringify(result.error)}`)
}
const quiet: { stdio: 'ignore' } = { stdio: 'ignore' }

console.log('\nflat, 100k entries')
const flat = await time('list_directory, product composition', 7, call(product, { path: 'big' }))
const flatBare = await time('list_directory, bare dsh-fs-local', 7, call(bare, { path: 'big' }))
const flatLong = await time('list_directory long=true, product', 5, call(product, { path: 'big', long: true }))
const flatSize = await time('list_directory sort=size, product', 3, call(product, { path: 'big', sort: 'size' }))
const listDir = await time('ctx.fs.listDir (the host path), product', 1, async () => product.ctx.fs.listDir(await product.ctx.fs.resolve(big)))
const lsShell = shellTimer(['ls', '-l', big])
const lsl = await time('ls -l > /dev/null (timed by a shell)', 5, lsShell.run)
const findShell = shellTimer(['find', tree, '-maxdepth', '3'])
const findSmall = shellTimer(['find', small, '-maxdepth', '3'])

// A host keeps directories only once they sat unchanged for SETTLED_MS (a tree being written is read each time): the
// trees were made just now, as no repository a user lists is.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, made + SETTLED_MS - Date.now())))
console.log('\nrecursive depth 3, 50k files (alternated: load and drift hit all alike)')
const deepRuns = await alternate(15, [
  ['list_directory recursive, product', call(product, { path: 'tree', recursive: true, depth: 3 })],
  ['list_directory recursive, bare dsh-fs-local', call(bare, { path: 'tree', recursive: true, depth: 3 })],
  ['find -maxdepth 3 > /dev/null (timed by a shell)', findShell.run],
  ['the same find by execFileSync from this host', () => execFileSync('find', [tree, '-maxdepth', '3'], quiet)],
  ['list_directory recursive, product, cachedEntries 0', call(uncached, { path: 'tree', recursive: true, depth: 3 })],
])
const [deep = Number.NaN, deepBare = Number.NaN, find = Number.NaN, findSpawned = Number.NaN, deepUncached = Number.NaN] = deepRuns

// The same call after the host sat idle (as between an agent's calls): caches and the CPU's clock have cooled.
console.log('\nrecursive depth 3, 50k files, each call after 200 ms idle (alternated)')
const afterIdle = async () => {
  await new Promise((resolve) => setTimeout(resolve, 200))
  const start = performance.now()
  await call(product, { path: 'tree', recursive: true, depth: 3 })()
  return { selfTimedMs: performance.now() - start }
}
const [idle = Number.NaN, idleFind = Number.NaN] = await alternate(9, [
  ['list_directory recursive, product, after 200 ms idle', afterIdle],
  ['find -maxdepth 3 > /dev/null (timed by a shell)', findShell.run],
])

console.log('\nrecursive depth 3, 20k directories of 2 files (alternated)')
const [manyDirs = Number.NaN, manyFind = Number.NaN, manyUncached = Number.NaN] = await alternate(9, [
  ['list_directory recursive, product', call(product, { path: 'small', recursive: true, depth: 3 })],
  ['find -maxdepth 3 > /dev/null (timed by a shell)', findSmall.run],
  ['list_directory recursive, product, cachedEntries 0', call(uncached, { path: 'small', recursive: true, depth: 3 })],
])

// The first five calls of fresh hosts (each its own process, plain Node on built JS as the dsh CLI runs: the JIT as cold
// as a new session's), each host alternated with a shell-timed find of the same tree.
const HOSTS = 5
const CALLS = 5
const median = (list: number[]): number => [...list].sort((x, y) => x - y)[Math.floor(list.length / 2)]!
async function freshHosts(label: string, path: string, shell: typeof findShell): Promise<{ calls: number[], find: number }> {
  console.log(`\n${label}, the first ${CALLS} calls of ${HOSTS} fresh hosts (product)`)
  const perCall: number[][] = Array.from({ length: CALLS }, () => [])
  const finds: number[] = []
  for (let host = 0; host < HOSTS; host++) {
    const run = spawnSync(process.execPath, [join(import.meta.dirname, 'first-calls.mjs'), dir, path, String(CALLS)], { encoding: 'utf8' })
    if (run.status !== 0) throw new Error(`first-calls.mjs failed: ${run.stderr}`)
    ;(JSON.parse(run.stdout) as number[]).forEach((ms, index) => perCall[index]!.push(ms))
    finds.push((await shell.run()).selfTimedMs)
  }
  const medians = perCall.map(median)
  medians.forEach((ms, index) => console.log(`${`call ${index + 1} of a fresh host`.padEnd(52)} ${ms.toFixed(1).padStart(9)} ms (median of ${HOSTS})`))
  const baseline = median(finds)
  console.log(`${'find -maxdepth 3 > /dev/null (timed by a shell)'.padEnd(52)} ${baseline.toFixed(1).padStart(9)} ms (median of ${HOSTS}, alternated)`)
  return { calls: medians, find: baseline }
}
const fresh = await freshHosts('recursive depth 3, 50k files', 'tree', findShell)
const freshSmall = await freshHosts('recursive depth 3, 20k directories of 2 files', 'small', findSmall)
const freshTwo = await freshHosts('recursive depth 3, a directory of 2 files', 'two', findShell)
for (const timer of [lsShell, findShell, findSmall]) timer.close()

const ratio = (label: string, value: number, target: string) => console.log(`${label.padEnd(52)} ${value.toFixed(2).padStart(6)}   ${target}`)
console.log(`\nproduct composition (dsh-fs-sandbox, workspace-write); load average ${load()} (1, 5, 15 min)`)
ratio('flat 100k: list_directory / ls -l', flat / lsl, '(target <= 1.00)')
ratio('flat 100k: ctx.fs.listDir / list_directory', listDir / flat, '(target >= 20)')
ratio('flat 100k long=true / ls -l', flatLong / lsl, '')
ratio('flat 100k sort=size / ls -l', flatSize / lsl, '')
const worst = (calls: number[]): number => Math.max(...calls)
ratio('50k files, first call of a fresh host / find', fresh.calls[0]! / fresh.find, '(target <= 1.50)')
ratio(`50k files, worst of the first ${CALLS} calls / find`, worst(fresh.calls) / fresh.find, '(target <= 1.50)')
ratio('50k files, warm: list_directory / find -maxdepth 3', deep / find, '(target <= 1.00)')
ratio('  the same / find by execFileSync (its spawn counted)', deep / findSpawned, '')
ratio('  every directory read (cachedEntries 0) / find', deepUncached / find, '')
ratio('50k files, after 200 ms idle / find', idle / idleFind, '')
// The first call's floor on one thread: its cost apart from reading, plus reading alone (bench/list-dir/where.ts: 1.04x).
ratio('  first call, a 2-file directory / find (50k files)', freshTwo.calls[0]! / fresh.find, '(what reading adds to)')
ratio('20k directories, first call of a fresh host / find', freshSmall.calls[0]! / freshSmall.find, '(target <= 1.50)')
ratio(`20k directories, worst of the first ${CALLS} calls / find`, worst(freshSmall.calls) / freshSmall.find, '(target <= 1.50)')
ratio('20k directories, warm / find', manyDirs / manyFind, '(target <= 1.00)')
ratio('  every directory read (cachedEntries 0) / find', manyUncached / manyFind, '')
console.log('bare dsh-fs-local, same run')
ratio('flat 100k: list_directory / ls -l', flatBare / lsl, '')
ratio('recursive depth 3: list_directory / find -maxdepth 3', deepBare / find, '')

await product.dispose()
await bare.dispose()
await uncached.dispose()
await removeTmpDir(dir)
