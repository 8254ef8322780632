// The copy gate. The published plugins share no runtime code, so a file may exist in two of them
// only as a declared copy: a header line "Identical in tool-a and tool-b" in every copy, at the
// same path under each package's src/, byte for byte the same. Those files are checked here and
// left out of the jscpd run (.jscpd.json) over every package's src/, which fails on any other
// copied run of 6 lines or more between packages.
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const MARK = /Identical in ((?:[\w-]+, )*[\w-]+) and ([\w-]+)/
const problems = []
const declared = []

for (const pkg of readdirSync(join(root, 'packages')).sort()) {
  const src = join(root, 'packages', pkg, 'src')
  let files
  try {
    files = readdirSync(src, { recursive: true }).filter((file) => file.endsWith('.ts')).sort()
  } catch {
    continue
  }
  for (const file of files) {
    const path = join(src, file)
    const match = MARK.exec(readFileSync(path, 'utf8'))
    if (match === null) continue
    const named = [...match[1].split(', '), match[2]]
    const where = relative(root, path)
    if (!named.includes(pkg)) problems.push(`${where}: marked "${match[0]}" but lives in ${pkg}`)
    for (const other of named.filter((name) => name !== pkg)) {
      const twin = join(root, 'packages', other, 'src', file)
      let same = false
      try {
        same = readFileSync(twin).equals(readFileSync(path))
      } catch {
        problems.push(`${where}: marked as a copy, but packages/${other}/src/${file} does not exist`)
        continue
      }
      if (!same) problems.push(`${where}: marked as identical, but differs from packages/${other}/src/${file}`)
    }
    declared.push(where)
  }
}

for (const problem of problems) console.error(`copies: ${problem}`)
console.log(`copies: ${declared.length} declared copies${declared.length > 0 ? ` (${declared.join(', ')})` : ''}`)

const srcDirs = readdirSync(join(root, 'packages')).map((pkg) => `packages/${pkg}/src`)
// --ignore on the command line replaces the config's list: pass both.
const ignore = [...JSON.parse(readFileSync(join(root, '.jscpd.json'), 'utf8')).ignore, ...declared]
const jscpd = spawnSync(
  join(root, 'node_modules/.bin/jscpd'),
  ['--config', '.jscpd.json', '--absolute', '--ignore', ignore.join(','), ...srcDirs],
  { cwd: root, stdio: 'inherit' },
)
process.exitCode = problems.length > 0 || jscpd.status !== 0 ? 1 : 0
