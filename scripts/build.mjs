// The build `npm start` and `npm test` run first (package.json `setup`): only when a source changed since the last
// build, and quietly: the build's log is printed only when it fails, and its exit status is then this script's.
//   node scripts/build.mjs          build if stale
//   node scripts/build.mjs --force  build anyway
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Written after a build that succeeded, dated when that build started: a source saved since is newer than it. */
const STAMP = join(root, '.tmp', 'build.stamp')
/** Root files every build reads. */
const ROOT_INPUTS = ['package.json', 'pnpm-lock.yaml', 'tsdown.config.ts', 'tsconfig.base.json', 'tsconfig.json']
/** What a build leaves in each built package. */
const OUTPUT = 'dist/index.js'

/** The newest modification time of a file, or under a directory (its own and its subdirectories' count a deleted file). */
function newest(path) {
  if (!existsSync(path)) return 0
  const info = statSync(path)
  if (!info.isDirectory()) return info.mtimeMs
  let max = info.mtimeMs
  for (const item of readdirSync(path, { recursive: true, withFileTypes: true })) {
    if (item.isFile() || item.isDirectory()) max = Math.max(max, statSync(join(item.parentPath ?? item.path, item.name)).mtimeMs)
  }
  return max
}

/** The packages a build writes: those with a build script of their own (tsc -b, or tsdown for a plugin). */
const packages = readdirSync(join(root, 'packages')).map((name) => join(root, 'packages', name)).filter((dir) => {
  const manifest = join(dir, 'package.json')
  return existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).scripts?.build !== undefined
})

function stale() {
  if (!existsSync(STAMP)) return 'never built here'
  const missing = packages.find((dir) => !existsSync(join(dir, OUTPUT)))
  if (missing !== undefined) return `${join(missing, OUTPUT)} is missing`
  const built = statSync(STAMP).mtimeMs
  const inputs = [
    ...ROOT_INPUTS.map((file) => join(root, file)),
    ...packages.flatMap((dir) => [join(dir, 'src'), join(dir, 'package.json'), join(dir, 'tsconfig.json')]),
  ]
  const changed = inputs.find((path) => newest(path) > built)
  return changed === undefined ? undefined : `${changed} changed`
}

const why = process.argv.includes('--force') ? 'forced' : stale()
if (why !== undefined) {
  const started = new Date()
  // The root `build` script, run by sh as a package manager runs it (tools from node_modules/.bin), without starting one
  // (npx and pnpm took a second or two before the build began).
  const script = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.build
  const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` }
  const build = spawnSync('sh', ['-c', script], { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  if (build.status !== 0) {
    process.stderr.write(`build failed (${why}):\n${build.stdout ?? ''}${build.stderr ?? ''}${build.error?.message ?? ''}\n`)
    process.exit(build.status ?? 1)
  }
  mkdirSync(dirname(STAMP), { recursive: true })
  writeFileSync(STAMP, `${why}\n`)
  utimesSync(STAMP, started, started)
}
