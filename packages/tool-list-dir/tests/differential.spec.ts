import { symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '@gencode-ai/testkit'
import { parseArgs, type ListArgs } from '../src/args.ts'
import { chooseSource } from '../src/list.ts'
import { renderListing } from '../src/render.ts'
import type { Entry, Listing } from '../src/types.ts'
import { mkfifo } from './fifo.ts'
import { listDirHost, listThrough, makeTree } from './harness.ts'

let host: Host

/** Each block runs once per composition, the product's (dsh-fs-sandbox, workspace-write) first. */
function describeOnBoth(name: string, body: () => void): void {
  for (const [provider, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' }], ['dsh-fs-local', {}]] as const) {
    describe(`${name} (${provider})`, () => {
      beforeAll(async () => {
        host = await listDirHost({}, options)
        await makeFixture(host.cwd)
      })
      afterAll(async () => { await host.dispose() })
      body()
    })
  }
}

async function makeFixture(cwd: string): Promise<void> {
  const tree: Record<string, string | null> = {
    'src/index.ts': 'export {}', 'src/cli/ui.ts': 'abc', 'src/cli/deep/x/y/z.ts': 'z', '.hidden/h': 'h',
    'README.md': 'r'.repeat(300), 'package.json': '{}', 'empty': null, 'Ünïcode é/文件.txt': 'ü', 'b': 'B', 'A': 'a',
  }
  for (let i = 0; i < 40; i++) tree[`many/f${String(i).padStart(2, '0')}.txt`] = 'x'.repeat(i)
  await makeTree(cwd, tree)
  await symlink('src', join(cwd, 'to-dir'))
  await symlink('README.md', join(cwd, 'to-file'))
  await symlink('missing', join(cwd, 'dangling'))
  await symlink('..', join(cwd, 'src/cli/loop'))
  await mkfifo(join(cwd, 'fifo'))
  await writeFile(join(cwd, 'src/cli/deep/big.bin'), Buffer.alloc(70_000))
}

const run = (args: ListArgs, source: 'local' | 'provider'): Promise<Listing> => listThrough(host, args, source)

const cases: ListArgs[] = [
  { path: '.' },
  { path: '.', ignore: ['*.md', '.*'] },
  { path: 'many' },
  { path: 'many', limit: 7 },
  { path: '.', recursive: true },
  { path: '.', recursive: true, depth: 10 },
  { path: '.', recursive: true, limit: 9 },
  { path: '.', recursive: true, pattern: '*.ts' },
  { path: '.', recursive: true, pattern: 'src/**' },
  { path: '.', recursive: true, files_only: true, sort: 'size' },
  { path: '.', recursive: true, directories_only: true, reverse: true },
  { path: '.', sort: 'name' },
  { path: '.', sort: 'size', reverse: true },
  { path: 'src', ignore: ['cli'] },
  { path: 'empty' },
]

/** What the ctx.fs contract cannot express: modification times, permissions, link text. */
function providerFields(value: Listing): Listing {
  const { metadata_unavailable: _flag, ...rest } = value
  return { ...rest, entries: value.entries.map(({ modified: _m, permissions: _p, target: _t, ...entry }): Entry => entry) }
}

const render = (value: Listing, args: ListArgs): string => {
  const request = parseArgs(args, 100)
  return renderListing(value, { ...request, pathArg: args.path })
}

describeOnBoth('the local fast path gives the same value and text as the ctx.fs path', () => {
  for (const args of cases) {
    it(JSON.stringify(args), async () => {
      const local = await run(args, 'local')
      const provider = await run(args, 'provider')
      expect(local.entries.length).toBeGreaterThan(args.path === 'empty' ? -1 : 0)
      const hasLinks = local.entries.some((entry) => entry.type === 'symlink')
      if (!hasLinks) {
        // Everything the provider can express is here: byte-identical value and text.
        expect(local).toEqual(provider)
        expect(render(local, args)).toBe(render(provider, args))
      } else {
        // Symlinks kept as entries (recursive): only the link text is beyond ctx.fs.
        expect(providerFields(local)).toEqual(providerFields(provider))
        expect(provider.entries.filter((entry) => entry.type === 'symlink').every((entry) => entry.target === undefined)).toBe(true)
      }
    })
  }

  it('long: identical on every field the provider reports; the provider path says what it cannot report', async () => {
    const local = await run({ path: '.', long: true }, 'local')
    const provider = await run({ path: '.', long: true }, 'provider')
    expect(providerFields(local)).toEqual(providerFields(provider))
    expect(local.entries.every((entry) => entry.modified !== undefined && entry.permissions !== undefined)).toBe(true)
    expect(local.metadata_unavailable).toBeUndefined()
    expect(provider.metadata_unavailable).toBe(true)
    expect(render(provider, { path: '.', long: true })).toContain('[modified times, permissions and link targets are not reported by this filesystem provider]')
  })

  it('sort "modified" through the provider is a clear error, not a silent name order', async () => {
    await expect(run({ path: '.', sort: 'modified' }, 'provider'))
      .rejects.toThrow('sort "modified" needs modification times, which this filesystem provider does not report — use sort "name" or "size"')
  })

  it('a link that loops or passes through a file lists as other in plain mode, beside its siblings', async () => {
    await makeTree(host.cwd, { 'links/ok.txt': 'ok' })
    await symlink('self', join(host.cwd, 'links/self'))
    await symlink('ok.txt/x', join(host.cwd, 'links/through'))
    const local = await run({ path: 'links' }, 'local')
    expect(local.entries.map((entry) => `${entry.type} ${entry.name}`)).toEqual(['file ok.txt', 'other self', 'other through'])
    // ctx.fs.listDir resolves every child, so through a provider the loop fails the listing; its error names the link.
    await expect(run({ path: 'links' }, 'provider')).rejects.toThrow(/links\/self.*ELOOP/)
  })

  it('the fast path is chosen for this provider (its reads are the local ones)', async () => {
    const target = await host.ctx.fs.resolve('.')
    expect(chooseSource(host.ctx, { display: target.displayPath, target }).kind).toBe('local')
  })
})
