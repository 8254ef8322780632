/**
 * The house's shape, held: src/ is four rooms whose imports run one way (tool → shells → {local, seam}; contract.ts
 * and config.ts are leaves any room may use; index.ts and lifecycle.ts sit on top), with no circle; the lint gate
 * refuses an import that runs the wrong way; and no module holds mutable state outside a plugin instance.
 */
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../..')
const src = join(import.meta.dirname, '../src')

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [])
}

const files = sources(src).map((file) => relative(src, file)).sort()
const text = (file: string) => readFileSync(join(src, file), 'utf8')

/** Every relative import (static, type-only, re-export or dynamic) of a file, resolved from src. */
function importsOf(file: string): string[] {
  const specifiers = [...text(file).matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((match) => match[1] ?? '')
  return specifiers.map((specifier) => relative(src, resolve(dirname(join(src, file)), specifier)))
}

const roomOf = (file: string) => file.includes('/') ? file.slice(0, file.indexOf('/')) : file.replace(/\.ts$/, '')

/** Which rooms each room may import (its own always). */
const ALLOWED: Record<string, readonly string[]> = {
  index: ['lifecycle', 'config', 'contract', 'tool', 'shells', 'local', 'seam'],
  lifecycle: ['config', 'contract', 'shells', 'local'],
  tool: ['config', 'contract', 'shells'],
  shells: ['contract', 'local', 'seam'],
  local: ['contract'],
  seam: ['contract'],
  contract: [],
  config: [],
}

describe('the rooms of src/', () => {
  it('are the four folders and the four files on top', () => {
    expect(new Set(files.map(roomOf))).toEqual(new Set(Object.keys(ALLOWED)))
  })

  it('import one way: no edge runs upward or sideways between local and seam', () => {
    const wrong = files.flatMap((file) => importsOf(file)
      .filter((target) => roomOf(target) !== roomOf(file) && !(ALLOWED[roomOf(file)] ?? []).includes(roomOf(target)))
      .map((target) => `${file} → ${target}`))
    expect(wrong).toEqual([])
  })

  it('have no circle of imports', () => {
    const state = new Map<string, 'open' | 'done'>()
    const circles: string[] = []
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' → '))
        return
      }
      state.set(file, 'open')
      for (const target of importsOf(file)) visit(target, [...path, file])
      state.set(file, 'done')
    }
    for (const file of files) visit(file, [])
    expect(circles).toEqual([])
  })
})

describe('module-level state', () => {
  /**
   * A top-level binding that can change between calls: `let`/`var`, a `new` object (Map, Set, Buffer…), a
   * Buffer.alloc, or an object or array literal not frozen `as const`.
   */
  function mutableTopLevel(file: string, source = text(file)): string[] {
    const lines = source.split('\n')
    const found: string[] = []
    lines.forEach((line, i) => {
      if (/^(export )?(let|var) /.test(line)) found.push(`${file}:${i + 1}`)
      const init = /^(?:export )?const \w+(?:: [^=]+)? = (.*)$/.exec(line)?.[1]
      if (init === undefined) return
      if (/^new |^Buffer\.alloc/.test(init)) found.push(`${file}:${i + 1}`)
      else if (/^[[{]/.test(init)) {
        // The literal's end: the first line back at column 0 closing it, or this line itself.
        const end = /[\]}]( as const| satisfies .*)?$/.test(init) && !/[[{]$/.test(init) ? i : lines.findIndex((each, j) => j > i && /^[\]}]/.test(each))
        if (!/ as const\b/.test(lines[end] ?? '')) found.push(`${file}:${i + 1}`)
      }
    })
    return found
  }

  it('none: every cache, buffer and hook belongs to an object the plugin makes and disposes', () => {
    expect(files.flatMap((file) => mutableTopLevel(file))).toEqual([])
  })

  it('one exit hook, installed by the local host', () => {
    const hooks = files.flatMap((file) => [...text(file).matchAll(/process\.(on|once)\('exit'/g)].map(() => file))
    expect(hooks).toEqual(['local/host.ts'])
  })

  it('the check sees what it looks for', () => {
    const probe = ['let count = 0', 'export const seen = new Map()', 'export const list = [', '  1,', ']', 'export const fixed = [1] as const', 'export const bump = () => ++count', ''].join('\n')
    expect(mutableTopLevel('probe.ts', probe)).toEqual(['probe.ts:1', 'probe.ts:2', 'probe.ts:3'])
  })
})

const ROOMS = 'packages/tool-bash-bg/src/'

describe('the lint gate refuses an import that runs the wrong way', () => {
  const probeDir = mkdtempSync(join(tmpdir(), 'rooms-lint-'))
  afterAll(() => rmSync(probeDir, { recursive: true, force: true }))

  /** The repository's room rules (the overrides naming tool-bash-bg's src), on probe files laid out as src is. */
  async function lint(probes: Record<string, string>): Promise<Array<{ file: string, line: number }>> {
    const config = JSON.parse(readFileSync(join(root, '.oxlintrc.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { overrides: Array<{ files: string[] }> }
    const rooms = config.overrides.filter((override) => override.files.some((glob) => glob.startsWith('packages/tool-bash-bg/src/')))
    writeFileSync(join(probeDir, '.oxlintrc.json'), JSON.stringify({ plugins: ['eslint'], overrides: rooms }))
    for (const [file, source] of Object.entries(probes)) {
      mkdirSync(dirname(join(probeDir, 'packages/tool-bash-bg/src', file)), { recursive: true })
      writeFileSync(join(probeDir, 'packages/tool-bash-bg/src', file), source)
    }
    const oxlint = join(root, 'node_modules/.bin/oxlint')
    const out = await promisify(execFile)(oxlint, ['-c', '.oxlintrc.json', '-f', 'json', 'packages'], { cwd: probeDir })
      .then(({ stdout }) => stdout, (error: { stdout?: string }) => error.stdout ?? '')
    const report = JSON.parse(out) as { diagnostics: Array<{ code: string, filename: string, labels: Array<{ span: { line: number } }> }> }
    return report.diagnostics.filter((d) => d.code === 'eslint(no-restricted-imports)')
      .map((d) => ({ file: d.filename.slice(d.filename.indexOf(ROOMS) + ROOMS.length), line: d.labels[0]?.span.line ?? 0 }))
      .sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line)
  }

  it('upward, sideways and into the top; the one-way imports pass', async () => {
    const found = await lint({
      'local/probe.ts': "import type { A } from '../shells/registry.ts'\nimport type { B } from '../seam/world.ts'\nimport type { C } from '../contract.ts'\nimport type { D } from './host.ts'\n",
      'seam/probe.ts': "import type { A } from '../local/host.ts'\nimport type { B } from '../contract.ts'\n",
      'shells/probe.ts': "import type { A } from '../tool/tool.ts'\nimport type { B } from '../lifecycle.ts'\nimport type { C } from '../local/host.ts'\nimport type { D } from '../seam/world.ts'\n",
      'tool/probe.ts': "import type { A } from '../local/host.ts'\nimport type { B } from '../index.ts'\nimport type { C } from '../shells/world.ts'\nimport type { D } from '../config.ts'\n",
      'contract.ts': "import type { A } from './shells/world.ts'\n",
    })
    expect(found).toEqual([
      { file: 'contract.ts', line: 1 },
      { file: 'local/probe.ts', line: 1 }, { file: 'local/probe.ts', line: 2 },
      { file: 'seam/probe.ts', line: 1 },
      { file: 'shells/probe.ts', line: 1 }, { file: 'shells/probe.ts', line: 2 },
      { file: 'tool/probe.ts', line: 1 }, { file: 'tool/probe.ts', line: 2 },
    ])
  }, 60_000)
})
