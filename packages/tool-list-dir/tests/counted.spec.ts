import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Host } from '@gencode-ai/testkit'
import type { ListArgs } from '../src/args.ts'
import type { Listing } from '../src/types.ts'
import { listDirHost, listThrough, makeTree } from './harness.ts'

// Past a full window a walk only counts what it reads (bare, without an object per entry, where the source can): the
// totals must be the ones a window holding every entry gives, whatever the directory holds.
let host: Host

async function makeFixture(cwd: string): Promise<void> {
  const tree: Record<string, string | null | { link: string }> = {
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.gitignore': '*.log\nbuild/\n',
    'a/x.ts': 'x', 'a/y.log': 'y', 'a/sub/.gitignore': 'z.*\n', 'a/sub/z.ts': 'z', 'a/sub/w.ts': 'w', 'a/sub/v.log': 'v',
    'b/node_modules/pkg/index.js': 'p', 'b/build/out.js': 'o', 'b/keep.tmp': 't', 'b/to-a': { link: '../a' },
    'b/dangling': { link: 'missing' }, 'b/empty': null, 'b/deep/er/est/leaf.ts': 'l',
  }
  for (let i = 0; i < 12; i++) tree[`c/f${i}.ts`] = 'c'.repeat(i)
  await makeTree(cwd, tree)
  // A name that is not UTF-8, in a directory read past the window: counted, and entered by its bytes.
  await mkdir(join(cwd, 'd'))
  const raw = Buffer.concat([Buffer.from(join(cwd, 'd', 'raw')), Buffer.from([0xff])])
  await mkdir(raw)
  await writeFile(Buffer.concat([raw, Buffer.from('/inner.ts')]), 'i')
}

/** What counting decides: everything but the shown window itself. */
const totals = ({ entries: _entries, truncated: _truncated, ...rest }: Listing) => rest

for (const [provider, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' }], ['dsh-fs-local', {}]] as const) {
  describe(`totals past a full window are the totals of a window holding everything (${provider})`, () => {
    beforeAll(async () => {
      host = await listDirHost({}, options)
      await makeFixture(host.cwd)
    })
    afterAll(async () => { await host.dispose() })

    const shapes: ListArgs[] = [
      { path: '.', recursive: true, depth: 4 },
      { path: '.', recursive: true, depth: 2 },
      { path: '.', recursive: true, depth: 4, ignore: ['*.tmp', 'sub'] },
      { path: '.', recursive: true, depth: 4, all: true },
      { path: '.', recursive: true, depth: 4, sort: 'size' },
    ]
    for (const shape of shapes) {
      it(JSON.stringify(shape), async () => {
        for (const source of ['local', 'provider'] as const) {
          const full = await listThrough(host, { ...shape, limit: 100 }, source)
          expect(full.truncated).toBeUndefined()
          for (const limit of [1, 3]) {
            const cut = await listThrough(host, { ...shape, limit }, source)
            expect(cut.entries).toHaveLength(limit)
            expect(totals(cut)).toEqual(totals(full))
            expect(cut.truncated?.remaining).toBe(full.stats.total - limit)
          }
        }
      })
    }
  })
}
