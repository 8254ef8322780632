/**
 * bench/list-dir where: where a recursive listing's time goes, against `find -maxdepth 3` in the same
 * run (alternated). The same depth-3 tree as bench/list-dir (a git repository, 500 directories of
 * 100 files), read five ways: find; readdirSync on every directory by path (no walk: Node's floor);
 * the same through per-directory handles as the walk opens them (each opened from its parent's
 * /proc/self/fd path with O_NOFOLLOW, then read through its own); the walk alone (LocalSource,
 * .gitignore rules on, no host); and the user's call on the product composition (dsh-sandbox-policy
 * workspace-write + dsh-fs-sandbox, the built plugin, called by an agent). `find` is timed by a long-lived shell (as
 * `time find …`), not by execFileSync from this host, whose spawn cost would be counted as find's.
 *   npx tsx bench/list-dir/where.ts [rounds]
 */
import '../../packages/testkit/src/polyfill.ts'
import { closeSync, constants, openSync, readdirSync, readlinkSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { bootHost, execTool, makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/dist/index.js'
import { parseArgs } from '../../packages/tool-list-dir/src/args.ts'
import { findRepo } from '../../packages/tool-list-dir/src/walk/repo.ts'
import { LocalSource } from '../../packages/tool-list-dir/src/walk/local-source.ts'
import { Walk } from '../../packages/tool-list-dir/src/walk/walk.ts'
import { shellTimer } from '../shell-timer.ts'
import { alternate } from '../time.ts'

const rounds = Number(process.argv[2] ?? 15)
const dir = await makeTmpDir('bench-where-')
const tree = join(dir, 'tree')
await mkdir(join(tree, '.git'), { recursive: true })
await writeFile(join(tree, '.gitignore'), '*.log\ncoverage/\n/build\n')
for (let a = 0; a < 20; a++) {
  for (let b = 0; b < 25; b++) {
    const sub = join(tree, `pkg${a}`, `mod${b}`)
    await mkdir(sub, { recursive: true })
    await Promise.all(Array.from({ length: 100 }, (_, i) => writeFile(join(sub, `f${i}.ts`), 'x'.repeat(i % 97))))
  }
  if (a % 5 === 0) await writeFile(join(tree, `pkg${a}`, '.gitignore'), 'dist/\n*.snap\n')
}

const host = await bootHost({ cwd: dir, sandbox: 'workspace-write' })
await host.ctx.plugin(ListDir, {})
const agent = host.agent(dir)
const request = parseArgs({ path: tree, recursive: true, depth: 3 }, 100)
const signal = new AbortController().signal
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
// As the walk names descriptors: by this process's id where /proc is its own pid namespace's.
const FD = readlinkSync('/proc/self') === String(process.pid) ? `/proc/${process.pid}/fd` : '/proc/self/fd'
const subdirs = (path: string): string[] =>
  readdirSync(path, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name)

const byPath = (): void => {
  for (const top of subdirs(tree)) for (const sub of subdirs(join(tree, top))) readdirSync(join(tree, top, sub), { withFileTypes: true })
}
const throughHandles = (): void => {
  const root = openSync(tree, DIR_FLAGS)
  for (const top of readdirSync(`${FD}/${root}`, { withFileTypes: true })) {
    if (!top.isDirectory()) continue
    const parent = openSync(`${FD}/${root}/${top.name}`, DIR_FLAGS)
    for (const sub of readdirSync(`${FD}/${parent}`, { withFileTypes: true })) {
      if (!sub.isDirectory()) continue
      const fd = openSync(`${FD}/${parent}/${sub.name}`, DIR_FLAGS)
      readdirSync(`${FD}/${fd}`, { withFileTypes: true })
      closeSync(fd)
    }
    closeSync(parent)
  }
  closeSync(root)
}

const findShell = shellTimer(['find', tree, '-maxdepth', '3'])
const load = loadavg()[0] ?? Number.NaN
const [find = Number.NaN, ...rest] = await alternate(rounds, [
  ['find -maxdepth 3 > /dev/null (timed by a shell)', findShell.run],
  ['readdirSync by path, no walk', byPath],
  ['readdirSync through handles, no walk', throughHandles],
  ['walk alone (LocalSource, .gitignore on)', async () => {
    const source = new LocalSource()
    const root = { display: tree, local: tree }
    await new Walk(source, request, await findRepo(source, root, signal), signal).run(root)
  }],
  ['the call, product composition', async () => {
    const result = await execTool(host.ctx, 'list_directory', { path: 'tree', recursive: true, depth: 3 }, { agent })
    if (result.isError) throw new Error(`list_directory failed: ${JSON.stringify(result.error)}`)
  }],
])
const [plain = Number.NaN, handles = Number.NaN, walked = Number.NaN, call = Number.NaN] = rest
console.log(`\n/ find: by path ${(plain / find).toFixed(2)}, handles ${(handles / find).toFixed(2)}, walk ${(walked / find).toFixed(2)}, `
  + `call ${(call / find).toFixed(2)} (load ${load.toFixed(1)} → ${(loadavg()[0] ?? Number.NaN).toFixed(1)})`)

findShell.close()
await host.dispose()
await removeTmpDir(dir)
