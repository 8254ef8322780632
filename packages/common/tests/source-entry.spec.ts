import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { sourceEntry } from '../src/source-entry.ts'

/** What `node <file>` prints. */
function run(file: string): string {
  const result = spawnSync(process.execPath, [file], { encoding: 'utf8' })
  expect(result.status, result.stderr).toBe(0)
  return result.stdout
}

describe('sourceEntry: an entry of the TypeScript source, bundled once and reused while its inputs keep their bytes', () => {
  let tmp: string
  let pkg: string
  /** The module beside the entries, as a caller passes its own import.meta.url. */
  let here: string
  const record = () => join(pkg, 'node_modules', '.cache', 'source-entries', 'src+main.ts.json')

  beforeAll(async () => {
    tmp = await makeTmpDir('source-entry-')
    pkg = join(tmp, 'pkg')
    mkdirSync(join(pkg, 'src'), { recursive: true })
    writeFileSync(join(pkg, 'package.json'), '{ "type": "module" }\n')
    writeFileSync(join(pkg, 'src', 'part.ts'), "export const part: string = 'one'\n")
    writeFileSync(join(pkg, 'src', 'main.ts'), [
      "import { formatBytes } from '@gencode-ai/dsh-tool-common'",
      "import { part } from './part.ts'",
      'console.log(`${part} ${formatBytes(2048)}`)',
      '',
    ].join('\n'))
    writeFileSync(join(pkg, 'src', 'outer.ts'), "import { RE2JS } from 're2js'\nconsole.log(RE2JS)\n")
    here = pathToFileURL(join(pkg, 'src', 'caller.ts')).href
  })
  afterAll(async () => {
    if (tmp) await removeTmpDir(tmp)
  })

  it('runs under plain node: its relative imports and the shared package inlined, in the package\'s node_modules/.cache', () => {
    const file = sourceEntry(here, 'main')
    expect(file.startsWith(join(pkg, 'node_modules', '.cache', 'source-entries', 'main-'))).toBe(true)
    expect(file.endsWith('.mjs')).toBe(true)
    expect(run(file)).toBe('one 2.0 KiB\n')
  })

  it('leaves another package an import (resolved from the package, as the source resolves it)', () => {
    const text = readFileSync(sourceEntry(here, 'outer'), 'utf8')
    expect(text).toMatch(/from "re2js"/)
  })

  it('the same inputs: the same file, and the record is not written again', () => {
    const first = sourceEntry(here, 'main')
    const written = statSync(record()).mtimeMs
    expect(sourceEntry(here, 'main')).toBe(first)
    expect(statSync(record()).mtimeMs).toBe(written)
  })

  it('an input with other bytes: a new bundle that runs the new source', () => {
    const before = sourceEntry(here, 'main')
    writeFileSync(join(pkg, 'src', 'part.ts'), "export const part: string = 'two'\n")
    const after = sourceEntry(here, 'main')
    expect(after).not.toBe(before)
    expect(run(after)).toBe('two 2.0 KiB\n')
  })

  it('a record it cannot read, or one naming a removed bundle, is built again', () => {
    writeFileSync(record(), '{ not json')
    const file = sourceEntry(here, 'main')
    expect(run(file)).toBe('two 2.0 KiB\n')
    const cache = join(pkg, 'node_modules', '.cache', 'source-entries')
    for (const name of readdirSync(cache).filter((each) => each.endsWith('.mjs'))) writeFileSync(join(cache, name), '')
    const again = JSON.parse(readFileSync(record(), 'utf8')) as { file: string }
    writeFileSync(record(), JSON.stringify({ ...again, file: join(cache, 'gone.mjs') }))
    expect(run(sourceEntry(here, 'main'))).toBe('two 2.0 KiB\n')
  })

  it('leaves no esbuild process running (it would carry this process\'s environment)', async () => {
    writeFileSync(join(pkg, 'src', 'part.ts'), "export const part: string = 'three'\n")
    expect(run(sourceEntry(here, 'main'))).toBe('three 2.0 KiB\n')
    const esbuilds = () => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]!.split(' ')
        return stat[0] !== 'Z' && Number(stat[1]) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('esbuild')
      } catch {
        return false
      }
    })
    // The bound only stops a hung test.
    for (let i = 0; i < 200 && esbuilds().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(esbuilds()).toEqual([])
  })

  it('an entry in no package says where it looked', () => {
    const loose = join(tmp, 'loose')
    mkdirSync(loose)
    writeFileSync(join(loose, 'main.ts'), 'console.log(1)\n')
    expect(() => sourceEntry(pathToFileURL(join(loose, 'caller.ts')).href, 'main')).toThrow(`no package.json at or above ${loose}`)
  })
})
