import { symlink } from 'node:fs/promises'
import { mkfifo } from './fifo.ts'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { listDirHost, makeTree } from './harness.ts'

const RULE = '─'.repeat(50)
let host: Host
beforeEach(async () => { host = await listDirHost() })
afterEach(async () => { await host.dispose() })

const list = (args: unknown, signal?: AbortSignal) => execTool(host.ctx, 'list_directory', args, signal ? { signal } : {})

describe('list_directory on the real host: the README contract', () => {
  it('renders the small-directory example exactly, and returns the README JSON value', async () => {
    await makeTree(host.cwd, { 'src': null, 'package.json': 'x'.repeat(1234), 'README.md': 'y'.repeat(5678) })
    const result = await list({ path: '.' })
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe([
      `Listed 3 items in ${host.cwd}:`,
      RULE,
      'DIR               src/',
      'FILE      1234 B  package.json',
      'FILE      5678 B  README.md',
      RULE,
      'Total: 3 items (1 directory, 2 files)',
    ].join('\n'))
    expect(result.isError ? undefined : result.value).toEqual({
      path: host.cwd,
      entries: [
        { name: 'src', type: 'directory' },
        { name: 'package.json', type: 'file', size: 1234 },
        { name: 'README.md', type: 'file', size: 5678 },
      ],
      stats: { total: 3, files: 2, directories: 1, others: 0 },
    })
  })

  it('ignore hides basenames (only * and ? are wildcards) and reports the count', async () => {
    await makeTree(host.cwd, {
      'src': null, 'package.json': 'x'.repeat(1234), 'a.test.ts': '', 'node_modules': null, '[x].md': '', '{a,b}': '', '!neg': '',
    })
    const result = await list({ path: '.', ignore: ['*.test.ts', 'node_modules', '[x].md', '{a,b}', '!neg'] })
    expect(textOf(result)).toBe([
      `Listed 2 items in ${host.cwd}:`,
      RULE,
      'DIR               src/',
      'FILE      1234 B  package.json',
      RULE,
      '[5 items hidden by ignore patterns]',
      '',
      'Total: 2 items (1 directory, 1 file)',
    ].join('\n'))
    expect(result.isError ? undefined : result.value).toMatchObject({ stats: { total: 2 }, ignored: 5 })
    // `[x].md` is literal: it does not match `x.md`.
    await makeTree(host.cwd, { 'x.md': '' })
    expect(textOf(await list({ path: '.', ignore: ['[x].md'] }))).toContain('FILE         0 B  x.md')
    expect(textOf(await list({ path: '.', ignore: ['?neg', 'pack*.json', 'sr?'] }))).toContain('[3 items hidden by ignore patterns]')
  })

  it('ignore patterns with dashes and other regex characters are literal', async () => {
    await makeTree(host.cwd, { 'pnpm-lock.yaml': '', 'yarn-lock.json': '', 'node-modules': null, 'a+b(c)': '', 'keep.txt': '' })
    const result = await list({ path: '.', ignore: ['pnpm-lock.yaml', '*-lock.*', 'node-modules', 'a+b(c)'] })
    expect(result.isError ? undefined : result.value).toMatchObject({ entries: [{ name: 'keep.txt' }], ignored: 4 })
  })

  it('sorts before truncating: directories first even past the cap (the README large example)', async () => {
    const tree: Record<string, string | null> = { 'src': null, 'tests': null }
    for (let i = 0; i < 148; i++) tree[`file${String(i).padStart(3, '0')}.ts`] = 'x'.repeat(100 + i)
    await makeTree(host.cwd, tree)
    const result = await list({ path: '.' })
    const lines = textOf(result).split('\n')
    expect(lines.slice(0, 6)).toEqual([
      `Listed 150 items in ${host.cwd}:`, RULE, 'DIR               src/', 'DIR               tests/', 'FILE       100 B  file000.ts', 'FILE       101 B  file001.ts',
    ])
    expect(lines).toHaveLength(2 + 100 + 4)
    expect(lines.slice(-4)).toEqual([RULE, '[50 items truncated, showing first 100 of 150 total]', '', 'Total: 150 items (2 directories, 148 files)'])
    expect(result.isError ? undefined : result.value).toMatchObject({
      stats: { total: 150, files: 148, directories: 2, others: 0 },
      truncated: { shown: 100, total: 150, remaining: 50 },
    })
  })

  it('default values sent explicitly keep the README text byte for byte', async () => {
    const tree: Record<string, string> = {}
    for (let i = 0; i < 101; i++) tree[`f${String(i).padStart(3, '0')}`] = ''
    await makeTree(host.cwd, tree)
    const plain = textOf(await list({ path: '.' }))
    const explicit = textOf(await list({ path: '.', recursive: false, sort: 'type', reverse: false, long: false, files_only: false, directories_only: false, limit: 100, ignore: [] }))
    expect(explicit).toBe(plain)
    expect(plain.endsWith('[1 item truncated, showing first 100 of 101 total]\n\nTotal: 101 items (0 directories, 101 files)')).toBe(true)
  })

  it('names the collator finds equal (NFC and NFD) still sort deterministically', async () => {
    await makeTree(host.cwd, { ['e\u0301.txt']: '', ['\u00e9.txt']: '' })
    const names = (await list({ path: '.' })) as unknown as { value: { entries: { name: string }[] } }
    // Equal to the collator; then by code point (U+0065 before U+00E9), whatever readdir's order.
    expect(names.value.entries.map((entry) => entry.name)).toEqual(['e\u0301.txt', '\u00e9.txt'])
  })

  it('package.json sorts before README.md (localeCompare within a group)', async () => {
    await makeTree(host.cwd, { 'README.md': '', 'package.json': '', 'b': null, 'A': null })
    const names = textOf(await list({ path: '.' })).split('\n').slice(2, 6).map((line) => line.trim().split(/\s+/).at(-1))
    expect(names).toEqual(['A/', 'b/', 'package.json', 'README.md'])
  })

  it('empty, and everything hidden by ignore, are two distinct messages', async () => {
    await makeTree(host.cwd, { 'empty': null, 'full/a': '', 'full/b': '', 'one/a': '' })
    expect(textOf(await list({ path: 'empty' }))).toBe(`Directory ${host.cwd}/empty is empty.`)
    expect(textOf(await list({ path: 'full', ignore: ['*'] }))).toBe(`Directory ${host.cwd}/full is not empty. The ignore patterns hid 2 items.`)
    expect(textOf(await list({ path: 'one', ignore: ['a'] }))).toBe(`Directory ${host.cwd}/one is not empty. The ignore patterns hid 1 item.`)
  })

  it('plain mode reports symlinks as the provider does: to a directory as a directory, dangling as other', async () => {
    await makeTree(host.cwd, { 'real/x': '12345', 'to-dir': { link: 'real' }, 'to-file': { link: 'real/x' }, 'dangling': { link: 'missing' } })
    expect(textOf(await list({ path: '.' }))).toBe([
      `Listed 4 items in ${host.cwd}:`,
      RULE,
      'DIR               real/',
      'DIR               to-dir/',
      'FILE         5 B  to-file',
      'OTHER             dangling',
      RULE,
      'Total: 4 items (2 directories, 1 file, 1 other)',
    ].join('\n'))
  })

  it('lists hidden files; ignore [".*"] hides them', async () => {
    await makeTree(host.cwd, { '.env': 'a', '.git': null, 'main.ts': '' })
    expect(textOf(await list({ path: '.' }))).toContain('DIR               .git/')
    expect(textOf(await list({ path: '.', ignore: ['.*'] }))).toContain('[2 items hidden by ignore patterns]')
  })

  it('a FIFO is an "other" entry and is never opened', async () => {
    await mkfifo(`${host.cwd}/pipe`)
    expect(textOf(await list({ path: '.' }))).toContain('OTHER             pipe')
  })

  it('unicode and spaces in names survive', async () => {
    await makeTree(host.cwd, { 'dossier é/文件 1.txt': 'ü' })
    expect(textOf(await list({ path: 'dossier é' }))).toContain('FILE         2 B  文件 1.txt')
  })
})

describe('errors name the argument and say what would work', () => {
  beforeEach(async () => { await makeTree(host.cwd, { 'file.txt': 'x', 'dir/a': '' }) })

  const cases: [string, unknown, string][] = [
    ['empty path', { path: '' }, 'path must name a directory — use "." for the workspace root'],
    ['blank path', { path: '   ' }, 'path must name a directory — use "." for the workspace root'],
    ['missing path argument', {}, 'invalid arguments'],
    ['path of the wrong type', { path: 42 }, 'invalid arguments'],
    ['non-string in ignore', { path: '.', ignore: ['ok', 7] }, '"ignore[1]" must be a string'],
    ['depth 0', { path: '.', recursive: true, depth: 0 }, 'depth must be an integer from 1 to 10 (levels below path; 1 = direct children), got 0'],
    ['depth 11', { path: '.', recursive: true, depth: 11 }, 'depth must be an integer from 1 to 10 (levels below path; 1 = direct children), got 11'],
    ['fractional depth', { path: '.', depth: 1.5 }, 'invalid arguments'],
    ['depth with recursive false', { path: '.', recursive: false, depth: 2 }, 'depth 2 needs recursive=true — drop depth, or set recursive=true'],
    ['invalid pattern', { path: '.', pattern: 'src/{a,b' }, 'pattern "src/{a,b" is not a valid glob'],
    ['blank pattern', { path: '.', pattern: '  ' }, 'pattern must be a non-empty glob such as "*.ts" — or leave it out'],
    ['negative offset', { path: '.', offset: -1 }, 'offset must be a non-negative integer (entries to skip), got -1'],
    ['offset past the end', { path: '.', offset: 50 }, 'offset 50 is past the end:'],
    ['both only-flags', { path: '.', files_only: true, directories_only: true }, 'files_only and directories_only cannot both be true — set one of them'],
    ['limit above maxEntries', { path: '.', limit: 101 }, 'limit 101 is above the maximum of 100 entries per call — use limit ≤ 100, or narrow with pattern'],
    ['limit 0', { path: '.', limit: 0 }, 'limit must be a positive integer, got 0'],
    ['negative limit', { path: '.', limit: -5 }, 'limit must be a positive integer, got -5'],
    ['unknown sort', { path: '.', sort: 'date' }, 'invalid arguments'],
    ['NUL in path', { path: 'a\0b' }, 'path must not contain a NUL character'],
  ]
  for (const [label, args, message] of cases) {
    it(label, async () => {
      const result = await list(args)
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain(message)
    })
  }

  it('a missing path', async () => {
    const result = await list({ path: 'nope' })
    expect(result.isError && result.error.info?.code).toBe('FS_NOT_FOUND')
    expect(textOf(result)).toBe(`Error: path "nope" does not exist (${host.cwd}/nope) — list its parent directory to see what is there`)
  })

  it('a file instead of a directory', async () => {
    const result = await list({ path: 'file.txt' })
    expect(result.isError && result.error.info?.code).toBe('FS_NOT_DIRECTORY')
    expect(textOf(result)).toBe(`Error: path "file.txt" is a file, not a directory (${host.cwd}/file.txt) — use read_file to read it`)
  })

  it('a FIFO instead of a directory', async () => {
    await mkfifo(`${host.cwd}/pipe`)
    expect(textOf(await list({ path: 'pipe' }))).toBe(`Error: path "pipe" is not a directory (${host.cwd}/pipe) — list its parent directory to see what it is`)
  })

  it('a huge path string is a clear error that does not echo it whole', async () => {
    expect(textOf(await list({ path: 'a/'.repeat(5000) }))).toBe('Error: path is 10000 characters; paths have at most 4096 — pass a shorter or relative path')
    const long = await list({ path: 'x'.repeat(300) })
    expect(textOf(long)).toBe(`Error: path "${'x'.repeat(120)}…" (300 characters) cannot be listed: a name in it is too long`)
  })

  it('a symlink loop as the path', async () => {
    await symlink('l2', `${host.cwd}/l1`)
    await symlink('l1', `${host.cwd}/l2`)
    expect(textOf(await list({ path: 'l1' }))).toBe('Error: path "l1" cannot be listed: it loops through symlinks')
  })

  it('huge globs are refused, naming the argument', async () => {
    expect(textOf(await list({ path: '.', pattern: 'x'.repeat(70_000) }))).toBe('Error: pattern is 70000 characters; a glob has at most 1024 — try e.g. "*.ts"')
    expect(textOf(await list({ path: '.', ignore: ['ok', 'y'.repeat(5000)] }))).toBe('Error: ignore[1] is 5000 characters; a basename glob has at most 1024 — shorten it, e.g. "*.log"')
  })
})

describe('cancellation', () => {
  it('a pre-aborted call never dispatches', async () => {
    const controller = new AbortController()
    controller.abort()
    const result = await list({ path: '.' }, controller.signal)
    expect(result.isError && result.error.info?.code).toBe('ABORTED_BEFORE_DISPATCH')
  })
})
