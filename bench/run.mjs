// Runs every benchmark in turn (each reports ratios against a baseline measured in the same run).
//   npm run bench            all of them
//   npm run bench -- read    one of: list-dir, list-dir-gitignore, list-dir-where, read, read-formats, bash-bg,
//                            bash-bg-wait-for, kill-shell
// The plugins must be built first (npm test or npm start does it; or npx -y pnpm@9.15.9 run build).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const benches = {
  'list-dir': ['npx', ['tsx', 'bench/list-dir/run.ts']],
  'list-dir-gitignore': ['npx', ['tsx', 'bench/list-dir/gitignore.ts']],
  'list-dir-where': ['npx', ['tsx', 'bench/list-dir/where.ts']],
  'read': [process.execPath, ['--expose-gc', 'bench/read/run.mjs']],
  'read-formats': [process.execPath, ['--expose-gc', 'bench/read/formats.mjs']],
  'bash-bg': [process.execPath, ['bench/bash-bg/run.mjs']],
  'bash-bg-wait-for': ['npx', ['tsx', 'bench/bash-bg/wait-for.ts']],
  'kill-shell': [process.execPath, ['bench/kill-shell/run.mjs']],
}
const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !(name in benches))
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(', ')} — choose from ${Object.keys(benches).join(', ')}`)
  process.exit(2)
}
let failed = 0
for (const name of wanted.length > 0 ? wanted : Object.keys(benches)) {
  const [command, args] = benches[name]
  console.log(`\n== bench/${name}`)
  const run = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (run.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
