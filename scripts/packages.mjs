// The packaging gate, for every published (non-private) package under packages/: publint in strict
// mode on what `npm pack` would publish, and the tarball holds only built JS, .d.ts, README.md,
// LICENSE, cordis.patch.yml and package.json (no source maps without sources, no build info).
// Needs a build first (npm run build).
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const SHIPPED = /^(?:dist\/.+\.(?:js|d\.ts)|README\.md|LICENSE|cordis\.patch\.yml|package\.json)$/
const REQUIRED = ['README.md', 'LICENSE', 'cordis.patch.yml', 'package.json', 'dist/index.js', 'dist/index.d.ts']
let failed = false

for (const folder of readdirSync(join(root, 'packages')).sort()) {
  const dir = join(root, 'packages', folder)
  if (!existsSync(join(dir, 'package.json'))) continue
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  if (manifest.private === true) continue
  const [packed] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: dir, encoding: 'utf8' }))
  const files = packed.files.map((file) => file.path).sort()
  const extra = files.filter((file) => !SHIPPED.test(file))
  const missing = REQUIRED.filter((file) => !files.includes(file))
  if (extra.length > 0) console.error(`${manifest.name}: the tarball must not ship ${extra.join(', ')}`)
  if (missing.length > 0) console.error(`${manifest.name}: the tarball lacks ${missing.join(', ')} (is it built?)`)
  failed ||= extra.length > 0 || missing.length > 0
  console.log(`${manifest.name}: ${files.length} files, ${packed.size} bytes packed`)
  try {
    execFileSync(join(root, 'node_modules/.bin/publint'), ['run', dir, '--strict', '--pack', 'npm'], { stdio: 'inherit' })
  } catch {
    failed = true
  }
}
process.exitCode = failed ? 1 : 0
