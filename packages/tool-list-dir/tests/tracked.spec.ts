/**
 * Git's rule for tracked files: ignore rules apply only to untracked paths. Real repositories made
 * with git; every show/hide decision of a recursive listing is compared with git's own
 * (`git check-ignore`, which leaves tracked paths out, and `git ls-files`), on index versions 2, 3
 * and 4, a SHA-256 repository, a split index (read through `git ls-files`) and a linked worktree.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { parseIndex, trackedPaths } from '../src/filters/git-index.ts'
import type { Listing } from '../src/types.ts'
import { listDirHost, listThrough, makeTree } from './harness.ts'

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' })

/** The files git shows in `root`: tracked, or untracked and not ignored (check-ignore skips tracked paths by default). */
function gitVisible(root: string, files: readonly string[]): Set<string> {
  let ignored: string[] = []
  try {
    ignored = execFileSync('git', ['check-ignore', '--stdin', '-z'], { cwd: root, input: files.join('\0'), encoding: 'utf8' }).split('\0')
  } catch (error) {
    // Exit status 1: none of them is ignored.
    if ((error as { status?: number }).status !== 1) throw error
  }
  const hidden = new Set(ignored)
  return new Set(files.filter((file) => !hidden.has(file)))
}

/** Every file under `root` but .git, as git-relative paths. */
function filesOf(root: string, dir = ''): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}${entry.name}`
    if (entry.name === '.git') return []
    return entry.isDirectory() ? filesOf(root, `${rel}/`) : [rel]
  })
}

/** A layout like prettier's: a nested `.gitignore` of `test-*` over committed `test-0/…`, plus rules that hide other tracked files. */
async function makeRepo(root: string, ...init: string[]): Promise<void> {
  git(root, 'init', '-q', ...init)
  await makeTree(root, {
    '.gitignore': '*.log\nbuild/\nvendor/\n',
    'README.md': 'r',
    'app.log': 'untracked, ignored',
    'committed.log': 'tracked though *.log',
    'build/out.js': 'untracked, ignored',
    'vendor/lib.js': 'tracked inside an ignored directory',
    'vendor/untracked.js': 'untracked inside that directory: ignored',
    'vendor/deep/more.js': 'tracked, two levels down',
    'vendor/other/x.js': 'untracked directory inside it: ignored',
    'tests/integration/cli/experimental-cli/.gitignore': 'test-*\n!test-keep.js\n',
    'tests/integration/cli/experimental-cli/run.js': 'tracked',
    'tests/integration/cli/experimental-cli/test-0/index.js': 'committed',
    'tests/integration/cli/experimental-cli/test-0/nested/a.js': 'committed',
    'tests/integration/cli/experimental-cli/test-0/scratch.js': 'untracked: its directory is excluded',
    'tests/integration/cli/experimental-cli/test-0/test-keep.js': 'untracked: a parent exclusion cannot be undone',
    'tests/integration/cli/experimental-cli/test-1/index.js': 'untracked',
    'tests/integration/cli/experimental-cli/test-keep.js': 'untracked, re-included',
  })
  git(root, 'add', '.gitignore', 'README.md', 'tests/integration/cli/experimental-cli/.gitignore', 'tests/integration/cli/experimental-cli/run.js')
  git(root, 'add', '-f', 'committed.log', 'vendor/lib.js', 'vendor/deep/more.js',
    'tests/integration/cli/experimental-cli/test-0/index.js', 'tests/integration/cli/experimental-cli/test-0/nested/a.js')
  git(root, 'commit', '-q', '-m', 'init')
}

let host: Host
beforeEach(async () => { host = await listDirHost() })
afterEach(async () => { await host.dispose() })

async function listing(args: Record<string, unknown>, cwd = host.cwd): Promise<{ text: string, value: Listing }> {
  const result = await execTool(host.ctx, 'list_directory', { path: cwd, recursive: true, depth: 10, ...args })
  if (result.isError) throw new Error(textOf(result))
  return { text: textOf(result), value: result.value as unknown as Listing }
}

/** Each file's decision in the listing and in git, with the tracked ones the rules match (so the comparison is not vacuous). */
async function compareWithGit(root: string): Promise<void> {
  const { value } = await listing({}, root)
  // A linked worktree's `.git` is a file: git's own data, not a work-tree file.
  const shown = new Set(value.entries.filter((entry) => entry.type === 'file' && entry.path !== '.git').map((entry) => entry.path!))
  const files = filesOf(root)
  expect(shown).toEqual(gitVisible(root, files))
  const tracked = git(root, 'ls-files', '-z').split('\0').filter((file) => file !== '')
  const matched = execFileSync('git', ['check-ignore', '--no-index', '--stdin', '-z'], { cwd: root, input: tracked.join('\0'), encoding: 'utf8' })
  expect(matched.split('\0').filter((file) => file !== '').length).toBeGreaterThanOrEqual(5)
  // A collapsed directory holds no tracked path, and git ignores it.
  for (const entry of value.entries.filter((each) => each.collapsed === 'gitignored')) {
    expect(tracked.some((file) => file.startsWith(`${entry.path!}/`))).toBe(false)
    expect(execFileSync('git', ['check-ignore', `${entry.path!}/`], { cwd: root, encoding: 'utf8' }).trim()).toBe(`${entry.path!}/`)
  }
  expect(value.tracked_unknown).toBeUndefined()
}

describe('tracked files are shown whatever the ignore rules say', () => {
  it('the prettier case: test-0/ is listed with its committed files, and pattern="*.js" finds them', async () => {
    await makeRepo(host.cwd)
    const cli = 'tests/integration/cli/experimental-cli'
    const { text, value } = await listing({ path: cli })
    expect(text).not.toContain('test-0/ (gitignored')
    expect(text).toContain('test-1/ (gitignored, 1 entry)')
    const paths = value.entries.map((entry) => entry.path)
    expect(paths).toEqual(expect.arrayContaining(['test-0', 'test-0/index.js', 'test-0/nested', 'test-0/nested/a.js', 'test-keep.js', 'run.js']))
    expect(paths).not.toContain('test-0/scratch.js')
    expect(paths).not.toContain('test-0/test-keep.js')
    const found = await listing({ path: cli, pattern: '*.js' })
    expect(found.value.entries.filter((entry) => entry.type === 'file').map((entry) => entry.path ?? '').sort())
      .toEqual(['run.js', 'test-0/index.js', 'test-0/nested/a.js', 'test-keep.js'])
    expect(found.text).not.toContain('nothing matches')
  })

  for (const [label, prepare] of [
    ['index version 2', (_root: string) => undefined],
    ['index version 3 (an intent-to-add entry has extended flags)', (root: string) => {
      writeFileSync(join(root, 'vendor', 'planned.js'), 'added with -N')
      git(root, 'add', '-f', '-N', 'vendor/planned.js')
    }],
    ['index version 4 (prefix-compressed paths)', (root: string) => { git(root, 'update-index', '--index-version', '4') }],
    ['a split index (read through git ls-files)', (root: string) => { git(root, 'update-index', '--split-index') }],
  ] as const) {
    it(`${label}: every decision is git's`, async () => {
      await makeRepo(host.cwd)
      prepare(host.cwd)
      const version = readFileSync(join(host.cwd, '.git', 'index')).readUInt32BE(4)
      if (label.startsWith('index version')) expect(version).toBe(Number(label.split(' ')[2]))
      await compareWithGit(host.cwd)
      expect((await trackedPaths(host.cwd, new AbortController().signal)).source).toBe(label.includes('split') ? 'git' : 'index')
    })
  }

  it('a SHA-256 repository: every decision is git\'s, from its index', async () => {
    await makeRepo(host.cwd, '--object-format=sha256')
    expect(git(host.cwd, 'rev-parse', '--show-object-format').trim()).toBe('sha256')
    await compareWithGit(host.cwd)
    expect((await trackedPaths(host.cwd, new AbortController().signal)).source).toBe('index')
  })

  it('a linked worktree (.git is a file naming its git directory): its own index decides', async () => {
    await makeRepo(host.cwd)
    const root = join(host.cwd, 'linked')
    git(host.cwd, 'worktree', 'add', '-q', root)
    expect(readFileSync(join(root, '.git'), 'utf8')).toMatch(/^gitdir: /)
    await makeTree(root, { 'vendor/untracked.js': 'u', 'app.log': 'a', 'tests/integration/cli/experimental-cli/test-0/scratch.js': 's' })
    await compareWithGit(root)
    expect((await trackedPaths(root, new AbortController().signal)).source).toBe('index')
  })

  it('a change to the index is seen by the next call (the parsed index is cached by file identity)', async () => {
    await makeRepo(host.cwd)
    const paths = async () => (await listing({})).value.entries.map((entry) => entry.path)
    expect(await paths()).not.toContain('app.log')
    git(host.cwd, 'add', '-f', 'app.log')
    expect(await paths()).toContain('app.log')
    git(host.cwd, 'rm', '-q', '--cached', 'committed.log')
    expect(await paths()).not.toContain('committed.log')
    await compareWithGit(host.cwd)
  })

  it('a fresh repository tracks nothing: ignore rules alone decide, as before', async () => {
    git(host.cwd, 'init', '-q')
    await makeTree(host.cwd, { '.gitignore': 'out/\n*.log\n', 'out/a.js': 'a', 'a.log': 'l', 'main.js': 'm' })
    const { text, value } = await listing({})
    expect(text).toContain('out/ (gitignored, 1 entry)')
    expect(value.gitignored).toBe(1)
    expect(value.tracked_unknown).toBeUndefined()
  })
})

describe('when the index cannot be read', () => {
  it('a corrupt index (git refuses it too): the rules alone decide, and the listing says so', async () => {
    await makeRepo(host.cwd)
    const path = join(host.cwd, '.git', 'index')
    const bytes = readFileSync(path)
    writeFileSync(path, Buffer.concat([bytes.subarray(0, 12), Buffer.alloc(100, 0xff)]))
    expect(() => git(host.cwd, 'ls-files')).toThrow()
    const { text, value } = await listing({})
    expect(value.tracked_unknown).toBe(true)
    expect(text).toContain('by .gitignore (tracked or not: no git index read)')
    expect(text).toContain('vendor/ (gitignored')
  })

  it('through a provider that is not the local disk: the index is read through ctx.fs, and git is never run', async () => {
    await makeRepo(host.cwd)
    const args = { path: '.', recursive: true, depth: 10 }
    const provider = await listThrough(host, args, 'provider')
    expect(provider).toEqual(await listThrough(host, args, 'local'))
    expect(provider.entries.map((entry) => entry.path)).toContain('committed.log')
    // A split index needs git ls-files, which would run on the host: through a provider it stays unknown.
    git(host.cwd, 'update-index', '--split-index')
    const split = await listThrough(host, args, 'provider')
    expect(split.tracked_unknown).toBe(true)
    expect(split.entries.map((entry) => entry.path)).not.toContain('committed.log')
    expect((await listThrough(host, args, 'local')).entries.map((entry) => entry.path)).toContain('committed.log')
  })

  it('git ls-files never runs a program the repository\'s config names (core.fsmonitor), nor follows the host\'s GIT_DIR', async () => {
    await makeRepo(host.cwd)
    git(host.cwd, 'update-index', '--split-index')
    const mark = join(host.cwd, 'hook-ran')
    const hook = join(host.cwd, 'hook.sh')
    writeFileSync(hook, `#!/bin/sh\ntouch '${mark}'\necho 0\n`, { mode: 0o755 })
    git(host.cwd, 'config', 'core.fsmonitor', hook)
    // The control: plain git ls-files runs the hook.
    git(host.cwd, 'ls-files')
    expect(existsSync(mark)).toBe(true)
    rmSync(mark)
    const saved = process.env.GIT_DIR
    process.env.GIT_DIR = '/nonexistent'
    try {
      const tracked = await trackedPaths(host.cwd, new AbortController().signal)
      expect(tracked.source).toBe('git')
      expect(tracked.holds('vendor/lib.js', false)).toBe(true)
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR
      else process.env.GIT_DIR = saved
    }
    expect(existsSync(mark)).toBe(false)
  })

  it('parseIndex on every truncation of a real index: refused, or every path (never a wrong list)', async () => {
    await makeRepo(host.cwd)
    for (const version of ['2', '4']) {
      git(host.cwd, 'update-index', '--index-version', version)
      const bytes = readFileSync(join(host.cwd, '.git', 'index'))
      expect(parseIndex(bytes).paths).toEqual(git(host.cwd, 'ls-files', '-z').split('\0').filter((file) => file !== ''))
      const expected = parseIndex(bytes).paths
      // A cut either fails to parse or, where it only drops extensions, still gives every path: never a wrong list.
      let refused = 0
      for (let length = 0; length < bytes.length; length++) {
        let paths
        try {
          paths = parseIndex(bytes.subarray(0, length)).paths
        } catch {
          refused++
          continue
        }
        expect(paths).toEqual(expected)
      }
      expect(refused).toBeGreaterThan(bytes.length * 0.9)
    }
  })
})
