import { chmod, symlink, utimes } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { listDirHost, makeTree } from './harness.ts'
import type { Listing } from '../src/types.ts'

let host: Host
beforeEach(async () => {
  host = await listDirHost()
  await makeTree(host.cwd, {
    'src/index.ts': 'export {}\n',
    'src/cli/index.ts': 'a',
    'src/cli/ui.ts': 'bb',
    'src/cli/session-picker.ts': 'ccc',
    'src/agent/agent.ts': 'dddd',
    'src/tools/index.ts': 'e',
    'src/tools/builtin/read.ts': 'f',
    'src/tools/builtin/deep/deeper.ts': 'g',
  })
})
afterEach(async () => { await host.dispose() })

const list = async (args: Record<string, unknown>) => {
  const result = await execTool(host.ctx, 'list_directory', args)
  if (result.isError) throw new Error(textOf(result))
  return { text: textOf(result), value: result.value as unknown as Listing }
}

describe('recursive tree', () => {
  it('depth counts levels below path: depth 2 shows tools/builtin/ with nothing under it', async () => {
    const { text, value } = await list({ path: 'src', recursive: true, depth: 2 })
    expect(text).toBe([
      'src/',
      '├── agent/',
      '│   └── agent.ts',
      '├── cli/',
      '│   ├── index.ts',
      '│   ├── session-picker.ts',
      '│   └── ui.ts',
      '├── tools/',
      '│   ├── builtin/',
      '│   └── index.ts',
      '└── index.ts',
      '',
      'Total: 10 items (4 directories, 6 files)',
    ].join('\n'))
    expect(value.entries.map((entry) => entry.path)).toContain('tools/builtin')
    expect(value.entries.map((entry) => entry.path)).not.toContain('tools/builtin/read.ts')
    expect(value.stats).toEqual({ total: 10, files: 6, directories: 4, others: 0, symlinks: 0 })
  })

  it('depth 1 is the direct children; the default depth is 3', async () => {
    expect((await list({ path: 'src', recursive: true, depth: 1 })).value.entries.map((entry) => entry.name))
      .toEqual(['agent', 'cli', 'tools', 'index.ts'])
    const deep = (await list({ path: 'src', recursive: true })).value.entries.map((entry) => entry.path)
    expect(deep).toContain('tools/builtin/deep')
    expect(deep).not.toContain('tools/builtin/deep/deeper.ts')
  })

  it('depth alone implies recursive', async () => {
    expect((await list({ path: 'src', depth: 1 })).text.split('\n')[0]).toBe('src/')
  })

  it('limit caps the whole tree in render order; following the offset hint pages through it, nothing lost or repeated', async () => {
    const { text, value } = await list({ path: 'src', recursive: true, limit: 4 })
    expect(text).toBe([
      'src/',
      '├── agent/',
      '│   └── agent.ts',
      '├── cli/',
      '│   ├── index.ts',
      '',
      '[8 items truncated, showing first 4 of 12 total]',
      '[Use offset=4 to continue.]',
      '',
      'Total: 12 items (5 directories, 7 files)',
    ].join('\n'))
    expect(value.truncated).toEqual({ shown: 4, total: 12, remaining: 8, next_offset: 4 })
    // The cut entries are drawn open: later siblings exist but did not fit.
    expect(value.entries.filter((entry) => entry.siblings_cut === true).map((entry) => entry.path)).toEqual(['cli', 'cli/index.ts'])
    const second = await list({ path: 'src', recursive: true, limit: 4, offset: 4 })
    expect(second.text).toBe([
      'src/',
      '├── cli/ (continued)',
      '│   ├── session-picker.ts',
      '│   └── ui.ts',
      '├── tools/',
      '│   ├── builtin/',
      '',
      '[4 items truncated, showing items 5-8 of 12 total]',
      '[Use offset=8 to continue.]',
      '',
      'Total: 12 items (5 directories, 7 files)',
    ].join('\n'))
    const pages = [value.entries]
    for (let offset: number | undefined = 4; offset !== undefined;) {
      const page: Listing = (await list({ path: 'src', recursive: true, limit: 4, offset })).value
      pages.push(page.entries)
      offset = page.truncated?.next_offset
    }
    const whole = (await list({ path: 'src', recursive: true })).value.entries
    expect(pages.flat().map((entry) => entry.path)).toEqual(whole.map((entry) => entry.path))
    expect(pages).toHaveLength(3)
  })

  it('symlinks are entries with their target and are never descended into (a loop terminates)', async () => {
    await symlink('..', join(host.cwd, 'src/cli/up'))
    await symlink(join(host.cwd, 'src'), join(host.cwd, 'src/self'))
    const { text, value } = await list({ path: 'src', recursive: true, depth: 10 })
    expect(value.entries.find((entry) => entry.path === 'cli/up')).toEqual({ name: 'up', path: 'cli/up', type: 'symlink', target: '..' })
    expect(text).toContain('│   └── up -> ..')
    expect(text).toContain(`└── self -> ${host.cwd}/src`)
    expect(value.entries.some((entry) => entry.path?.startsWith('self/'))).toBe(false)
    expect(value.stats.symlinks).toBe(2)
  })

  it('ignore hides an entry and everything under it', async () => {
    const { value, text } = await list({ path: 'src', recursive: true, ignore: ['cli', 'tools'] })
    expect(value.entries.map((entry) => entry.path)).toEqual(['agent', 'agent/agent.ts', 'index.ts'])
    expect(value.ignored).toBe(2)
    expect(text).toContain('[Hidden: 2 by ignore patterns]')
  })
})

describe('pattern', () => {
  it('without "/" matches basenames at any depth, listed as relative paths', async () => {
    const { text, value } = await list({ path: 'src', recursive: true, pattern: 'index.ts' })
    expect(text).toBe(['src/', '  cli/index.ts', '  tools/index.ts', '  index.ts', '', 'Total: 3 items (0 directories, 3 files)'].join('\n'))
    expect(value.filtered).toBe(9)
  })

  it('with "/" matches the relative path', async () => {
    const { value } = await list({ path: 'src', recursive: true, pattern: 'tools/**/*.ts' })
    expect(value.entries.map((entry) => entry.path)).toEqual(['tools/builtin/read.ts', 'tools/index.ts'])
  })

  it('flat (non-recursive) keeps the README layout', async () => {
    const { text } = await list({ path: 'src/cli', pattern: 'u*.ts' })
    expect(text.split('\n')[0]).toBe(`Listed 1 item in ${host.cwd}/src/cli:`)
  })

  it('no match says so, without claiming the directory is empty', async () => {
    expect((await list({ path: 'src', pattern: '*.py' })).text)
      .toBe(`Directory ${host.cwd}/src is not empty, but nothing matches pattern "*.py" (4 items left out).`)
  })
})

describe('sort, reverse, type filters, limit', () => {
  beforeEach(async () => {
    await utimes(join(host.cwd, 'src/cli/ui.ts'), 1_000, 1_000)
    await utimes(join(host.cwd, 'src/cli/index.ts'), 3_000, 3_000)
    await utimes(join(host.cwd, 'src/cli/session-picker.ts'), 2_000, 2_000)
  })
  const names = async (args: Record<string, unknown>) => (await list({ path: 'src/cli', ...args })).value.entries.map((entry) => entry.name)

  it('size: largest first; reverse flips', async () => {
    expect(await names({ sort: 'size' })).toEqual(['session-picker.ts', 'ui.ts', 'index.ts'])
    expect(await names({ sort: 'size', reverse: true })).toEqual(['index.ts', 'ui.ts', 'session-picker.ts'])
  })

  it('modified: newest first', async () => {
    expect(await names({ sort: 'modified' })).toEqual(['index.ts', 'session-picker.ts', 'ui.ts'])
  })

  it('name ignores type; type is the README order', async () => {
    expect((await list({ path: 'src', sort: 'name' })).value.entries.map((entry) => entry.name)).toEqual(['agent', 'cli', 'index.ts', 'tools'])
    expect((await list({ path: 'src', sort: 'type' })).value.entries.map((entry) => entry.name)).toEqual(['agent', 'cli', 'tools', 'index.ts'])
    expect((await list({ path: 'src', reverse: true })).value.entries.map((entry) => entry.name)).toEqual(['index.ts', 'tools', 'cli', 'agent'])
  })

  it('directories_only / files_only, flat and in a tree', async () => {
    expect((await list({ path: 'src', directories_only: true })).value.entries.map((entry) => entry.name)).toEqual(['agent', 'cli', 'tools'])
    expect((await list({ path: 'src', files_only: true })).value.entries.map((entry) => entry.name)).toEqual(['index.ts'])
    const tree = await list({ path: 'src', recursive: true, directories_only: true })
    expect(tree.text).toBe(['src/', '├── agent/', '├── cli/', '└── tools/', '    └── builtin/', '        └── deep/', '', 'Total: 5 items (5 directories, 0 files)'].join('\n'))
  })

  it('limit cuts after sorting and says how to see the rest', async () => {
    const { text, value } = await list({ path: 'src', limit: 2 })
    expect(value.entries.map((entry) => entry.name)).toEqual(['agent', 'cli'])
    expect(text).toContain('[2 items truncated, showing first 2 of 4 total]\n[Use offset=2 to continue.]')
    const rest = await list({ path: 'src', limit: 2, offset: 2 })
    expect(rest.value.entries.map((entry) => entry.name)).toEqual(['tools', 'index.ts'])
    expect(rest.text).toContain('[Showing items 3-4 of 4 total]')
  })
})

describe('long', () => {
  it('adds permissions, ISO modified time and link targets', async () => {
    await chmod(join(host.cwd, 'src/index.ts'), 0o640)
    await utimes(join(host.cwd, 'src/index.ts'), 1_700_000_000, 1_700_000_000)
    await symlink('index.ts', join(host.cwd, 'src/link'))
    const { value, text } = await list({ path: 'src', long: true })
    expect(value.entries.find((entry) => entry.name === 'index.ts')).toEqual({
      name: 'index.ts', type: 'file', size: 10, permissions: 'rw-r-----', modified: '2023-11-14T22:13:20.000Z',
    })
    expect(value.entries.find((entry) => entry.name === 'link')).toMatchObject({ type: 'symlink', target: 'index.ts', permissions: 'rwxrwxrwx' })
    expect(text).toContain('FILE   rw-r-----            10 B  2023-11-14T22:13:20.000Z  index.ts')
    expect(text).toContain('  link -> index.ts')
  })

  it('in a tree, details follow each name', async () => {
    await utimes(join(host.cwd, 'src/agent/agent.ts'), 1_700_000_000, 1_700_000_000)
    const { text } = await list({ path: 'src/agent', recursive: true, long: true })
    expect(text.split('\n')[1]).toBe('└── agent.ts  (4 B, rw-r--r--, 2023-11-14T22:13:20.000Z)')
  })
})
