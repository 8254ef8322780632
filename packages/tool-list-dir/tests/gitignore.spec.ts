import { execFileSync } from 'node:child_process'
import { mkdir, readdir, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import type { ListArgs } from '../src/args.ts'
import type { Listing } from '../src/types.ts'
import { mkfifo } from './fifo.ts'
import { GitIgnore } from '../src/filters/gitignore.ts'
import { listDirHost, listThrough, makeTree } from './harness.ts'

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' })

/** A real repository: `git init`, root and nested .gitignore files, dependencies and build output. */
async function makeRepo(root: string): Promise<void> {
  git(root, 'init', '-q')
  const tree: Record<string, string | null> = {
    '.gitignore': '*.log\n!keep.log\n/build\ndist/\n*.gen\nnode_modules/\n# a comment\n\\#hash\n',
    'app.log': 'x',
    'keep.log': 'k',
    '#hash': 'h',
    'build/out.js': 'b',
    'README.md': 'r',
    'src/.gitignore': '!important.gen\ncache/\n',
    'src/index.ts': 'i',
    'src/a.gen': 'a',
    'src/important.gen': 'i',
    'src/build/kept.js': 'kept: /build is anchored to the root',
    'src/dist/bundle.js': 'd',
    'src/cache/c1': '1',
    'src/cache/c2': '2',
    'src/deep/.gitignore': '*.ts\n!keep.ts\n',
    'src/deep/x.ts': 'x',
    'src/deep/keep.ts': 'k',
    'src/deep/y.js': 'y',
    'lib/__pycache__/m.pyc': 'p',
    'lib/m.py': 'm',
  }
  for (let i = 0; i < 3; i++) tree[`node_modules/pkg${i}/index.js`] = 'n'
  await makeTree(root, tree)
}

let host: Host
beforeEach(async () => {
  host = await listDirHost()
  await makeRepo(host.cwd)
})
afterEach(async () => { await host.dispose() })

const list = async (args: Record<string, unknown>) => {
  const result = await execTool(host.ctx, 'list_directory', args)
  if (result.isError) throw new Error(textOf(result))
  return { text: textOf(result), value: result.value as unknown as Listing }
}

describe('recursive listing of a git repository', () => {
  it('gitignored and heavy directories are one line with their direct-children count; gitignored files are left out', async () => {
    const { text, value } = await list({ path: '.', recursive: true })
    expect(text).toBe([
      './',
      `├── .git/ (not expanded, ${(await readdir(join(host.cwd, '.git'))).length} entries)`,
      '├── build/ (gitignored, 1 entry)',
      '├── lib/',
      '│   ├── __pycache__/ (not expanded, 1 entry)',
      '│   └── m.py',
      '├── node_modules/ (gitignored, 3 entries)',
      '├── src/',
      '│   ├── build/',
      '│   │   └── kept.js',
      '│   ├── cache/ (gitignored, 2 entries)',
      '│   ├── deep/',
      '│   │   ├── .gitignore',
      '│   │   ├── keep.ts',
      '│   │   └── y.js',
      '│   ├── dist/ (gitignored, 1 entry)',
      '│   ├── .gitignore',
      '│   ├── important.gen',
      '│   └── index.ts',
      '├── .gitignore',
      '├── keep.log',
      '└── README.md',
      '',
      '[Hidden: 4 by .gitignore]',
      '',
      'Total: 21 items (10 directories, 11 files)',
    ].join('\n'))
    // app.log, "#hash" (an escaped "#" is a pattern, not a comment), src/a.gen, src/deep/x.ts
    expect(value.gitignored).toBe(4)
    expect(value.entries.find((entry) => entry.path === 'node_modules')).toEqual({
      name: 'node_modules', path: 'node_modules', type: 'directory', collapsed: 'gitignored', children: 3,
    })
    expect(value.entries.find((entry) => entry.path === '.git')).toMatchObject({ collapsed: 'heavy' })
  })

  it('agrees with git itself on every path it shows or hides', async () => {
    const everything = (await list({ path: '.', recursive: true, depth: 10, all: true })).value.entries
      .filter((entry) => !entry.path!.startsWith('.git/') && entry.path !== '.git')
    const paths = everything.map((entry) => `${entry.path!}${entry.type === 'directory' ? '/' : ''}`)
    const ignoredByGit = new Set(execFileSync('git', ['check-ignore', '--stdin', '--no-index'], { cwd: host.cwd, input: paths.join('\n'), encoding: 'utf8' })
      .split('\n').filter((line) => line !== ''))
    const shown = (await list({ path: '.', recursive: true, depth: 10 })).value.entries
    const heavyInside = (path: string) => /(^|\/)(__pycache__|\.git)\/./.test(path)
    // Expected: what git keeps, plus each ignored directory whose parent git keeps (one line).
    const expected = paths.filter((path) => {
      const parent = path.replace(/[^/]+\/?$/, '')
      if (heavyInside(path)) return false
      if (parent !== '' && ignoredByGit.has(parent)) return false
      return !ignoredByGit.has(path) || path.endsWith('/')
    })
    expect(shown.map((entry) => `${entry.path!}${entry.type === 'directory' ? '/' : ''}`).filter((path) => path !== '.git/').sort()).toEqual(expected.sort())
  })

  it('all: true shows gitignored entries and descends the heavy set; the ignore argument still applies', async () => {
    const { text, value } = await list({ path: '.', recursive: true, all: true, ignore: ['.git'] })
    expect(value.entries.map((entry) => entry.path)).toEqual(expect.arrayContaining(['app.log', 'node_modules/pkg0/index.js', 'lib/__pycache__/m.pyc', 'src/cache/c1']))
    expect(value.entries.some((entry) => entry.collapsed !== undefined)).toBe(false)
    expect(value.gitignored).toBeUndefined()
    expect(text).toContain('[Hidden: 1 by ignore patterns]')
  })

  it('a repository entered through a subdirectory: the .gitignore files above apply, anchored rules stay anchored', async () => {
    const { text } = await list({ path: 'src', recursive: true })
    expect(text).toBe([
      'src/',
      '├── build/',
      '│   └── kept.js',
      '├── cache/ (gitignored, 2 entries)',
      '├── deep/',
      '│   ├── .gitignore',
      '│   ├── keep.ts',
      '│   └── y.js',
      '├── dist/ (gitignored, 1 entry)',
      '├── .gitignore',
      '├── important.gen',
      '└── index.ts',
      '',
      '[Hidden: 2 by .gitignore]',
      '',
      'Total: 11 items (4 directories, 7 files)',
    ].join('\n'))
    // Deeper still: three .gitignore files apply, the deepest's negation wins.
    expect((await list({ path: 'src/deep', recursive: true })).value.entries.map((entry) => entry.name)).toEqual(['.gitignore', 'keep.ts', 'y.js'])
  })

  it('a listed directory that is itself gitignored is listed in full (what was asked for is shown)', async () => {
    const { value } = await list({ path: 'node_modules', recursive: true })
    expect(value.entries.map((entry) => entry.path)).toEqual(['pkg0', 'pkg0/index.js', 'pkg1', 'pkg1/index.js', 'pkg2', 'pkg2/index.js'])
    expect(value.gitignored).toBeUndefined()
  })

  it('a directory both heavy and gitignored reads (gitignored, N entries); a symlink named like one is an entry, not collapsed', async () => {
    await makeTree(host.cwd, { 'py/.gitignore': '__pycache__/\n', 'py/__pycache__/a.pyc': 'a', 'py/__pycache__/b.pyc': 'b' })
    await symlink('../node_modules', join(host.cwd, 'py/.venv'))
    const { text } = await list({ path: 'py', recursive: true })
    expect(text).toBe(['py/', '├── __pycache__/ (gitignored, 2 entries)', '├── .gitignore', '└── .venv -> ../node_modules', '', 'Total: 3 items (1 directory, 1 file, 1 symlink)'].join('\n'))
  })

  it('the repository is found through a symlinked directory (git works on real paths)', async () => {
    const outside = await makeTmpDir()
    try {
      await symlink(join(host.cwd, 'src'), join(outside, 'src-link'))
      const other = await listDirHost({ outsideWorkspace: 'allow' }, { cwd: outside })
      try {
        const result = await execTool(other.ctx, 'list_directory', { path: 'src-link', recursive: true, depth: 1 })
        expect(textOf(result)).toContain('├── cache/ (gitignored, 2 entries)')
        expect((result.value as unknown as Listing).gitignored).toBe(1) // src/a.gen
      } finally {
        await other.dispose()
      }
    } finally {
      await removeTmpDir(outside)
    }
  })

  it('a .gitignore that is a symlink or a FIFO is not read (git does not follow one either)', async () => {
    await makeTree(host.cwd, { 'rules.txt': '*.js\n', 'linked/x.js': 'x', 'piped/inner/y.js': 'y' })
    await symlink('../rules.txt', join(host.cwd, 'linked/.gitignore'))
    await mkfifo(join(host.cwd, 'piped/.gitignore'))
    expect((await list({ path: 'linked', recursive: true })).value.entries.map((entry) => entry.name)).toEqual(['x.js', '.gitignore'])
    // Entered below it: the FIFO is an ancestor's .gitignore, opened without blocking.
    expect((await list({ path: 'piped/inner', recursive: true })).value.entries.map((entry) => entry.name)).toEqual(['y.js'])
  })

  it('plain mode is untouched: gitignored files and heavy directories list as always', async () => {
    const { text } = await list({ path: '.' })
    expect(text).toContain('DIR               node_modules/\n')
    expect(text).toContain('B  app.log\n')
    expect(text).not.toContain('gitignored')
  })
})

describe('no repository', () => {
  it('a .gitignore outside any repository is not applied; the heavy set still is', async () => {
    const bare = await makeTmpDir()
    try {
      await makeTree(bare, { '.gitignore': '*.txt\n', 'a.txt': 'a', 'node_modules/x/y.js': 'y', '.venv/bin/python': 'p' })
      const other = await listDirHost({}, { cwd: bare })
      try {
        const text = textOf(await execTool(other.ctx, 'list_directory', { path: '.', recursive: true }))
        expect(text).toBe([
          './',
          '├── .venv/ (not expanded, 1 entry)',
          '├── node_modules/ (not expanded, 1 entry)',
          '├── .gitignore',
          '└── a.txt',
          '',
          'Total: 4 items (2 directories, 2 files)',
        ].join('\n'))
      } finally {
        await other.dispose()
      }
    } finally {
      await removeTmpDir(bare)
    }
  })
})

describe('offset', () => {
  it('pages through a tree with collapsed directories, each one entry: nothing lost or repeated', async () => {
    const whole = (await list({ path: '.', recursive: true })).value
    const seen: string[] = []
    let offset: number | undefined = 0
    let calls = 0
    while (offset !== undefined) {
      const { value, text } = await list({ path: '.', recursive: true, limit: 5, offset })
      calls++
      if (value.truncated !== undefined) expect(text).toContain(`[Use offset=${value.truncated.next_offset} to continue.]`)
      seen.push(...value.entries.map((entry) => `${entry.path!}${entry.collapsed === undefined ? '' : ` (${entry.children})`}`))
      offset = value.truncated?.next_offset
    }
    expect(seen).toEqual(whole.entries.map((entry) => `${entry.path!}${entry.collapsed === undefined ? '' : ` (${entry.children})`}`))
    expect(calls).toBe(Math.ceil(whole.stats.total / 5))
  })

  it('an offset past the end names offset and the total', async () => {
    const result = await execTool(host.ctx, 'list_directory', { path: 'src', recursive: true, offset: 11 })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(`Error: offset 11 is past the end: ${host.cwd}/src lists 11 items with these arguments — use an offset below 11, or leave offset out`)
  })
})

describe('optional arguments sent as "" or null count as absent', () => {
  it('every optional argument', async () => {
    const plain = textOf(await execTool(host.ctx, 'list_directory', { path: 'src' }))
    const sent = {
      path: 'src', ignore: null, recursive: null, depth: null, pattern: '', sort: '', reverse: null, directories_only: null,
      files_only: '', long: null, limit: null, offset: '', all: null,
    }
    const result = await execTool(host.ctx, 'list_directory', sent)
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe(plain)
    const tree = await execTool(host.ctx, 'list_directory', { path: 'src', recursive: true, depth: null, offset: null, all: '' })
    expect(textOf(tree)).toBe(textOf(await execTool(host.ctx, 'list_directory', { path: 'src', recursive: true })))
  })

  it('a present, wrong value is still an error', async () => {
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: 'src', offset: 'x' }))).toContain('invalid arguments')
  })
})

describe('the ctx.fs path matches the local fast path on a repository', () => {
  const run = (args: ListArgs, source: 'local' | 'provider'): Promise<Listing> => listThrough(host, args, source)
  for (const args of [{ path: '.', recursive: true }, { path: 'src', recursive: true, depth: 10 }, { path: '.', recursive: true, limit: 4, offset: 3 }] as ListArgs[]) {
    it(JSON.stringify(args), async () => {
      expect(await run(args, 'provider')).toEqual(await run(args, 'local'))
    })
  }

  it('on the product composition (dsh-sandbox-policy workspace-write + dsh-fs-sandbox)', async () => {
    const sandboxed = await listDirHost({}, { sandbox: 'workspace-write' })
    try {
      await makeRepo(sandboxed.cwd)
      await mkdir(join(sandboxed.cwd, 'empty-dir'))
      const text = textOf(await execTool(sandboxed.ctx, 'list_directory', { path: '.', recursive: true, depth: 1 }))
      expect(text).toContain('├── node_modules/ (gitignored, 3 entries)')
      expect(text).toContain('├── build/ (gitignored, 1 entry)')
      expect(text).toContain('[Hidden: 2 by .gitignore]')
    } finally {
      await sandboxed.dispose()
    }
  })
})

describe('rules described for the count thread', () => {
  it('rebuilt from their description, they decide every path as the originals do', () => {
    const tracked = { source: 'index' as const, holds: (path: string) => path === 'out/kept.js' || path === 'out' }
    // The deepest file decides: pkg/'s `*.snap` over the root's `!special.snap` (a rebuild in the wrong order would not).
    const original = new GitIgnore().with('', '*.log\n!keep.log\nout/\n!special.snap\n').with('pkg/', '/gen\n*.snap\n').tracking(tracked)
    const inDir = original.inDirectory('')
    inDir('out', true) // enters `out/` for its tracked file, as a walk would
    const rebuilt = GitIgnore.from(original.describe(), tracked)
    for (const [dir, name, directory] of [
      ['', 'a.log', false], ['', 'keep.log', false], ['', 'out', true], ['out/', 'x.js', false], ['out/', 'kept.js', false],
      ['pkg/', 'gen', true], ['pkg/', 'a.snap', false], ['pkg/', 'special.snap', false], ['', 'special.snap', false],
      ['pkg/sub/', 'gen', true], ['pkg/sub/', 'b.ts', false],
    ] as const) {
      expect(rebuilt.ignores(dir, name, directory), `${dir}${name}`).toBe(original.ignores(dir, name, directory))
    }
    expect(rebuilt.describe()).toEqual(original.describe())
  })
})
