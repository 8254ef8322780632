import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, type Host } from '@gencode-ai/testkit'
import type { Listing } from '../src/types.ts'
import { listDirHost, makeTree } from './harness.ts'

// Stats for more entries than one slice (256) are taken slice by slice, yielding to the event loop between them; links
// followed in a directory holding more than a slice of them likewise. The answer must be the one a single pass gives.
let host: Host
const FILES = 700

beforeAll(async () => {
  host = await listDirHost({ maxEntries: 1000 })
  const tree: Record<string, string | { link: string }> = {}
  // Sizes in a scrambled order, so a sort that skipped a slice's stats would show.
  for (let i = 0; i < FILES; i++) tree[`big/f${String(i).padStart(3, '0')}`] = 'x'.repeat((i * 37) % FILES)
  for (let i = 0; i < 300; i++) tree[`links/l${String(i).padStart(3, '0')}`] = { link: i % 2 === 0 ? `../big/f${String(i).padStart(3, '0')}` : 'missing' }
  await makeTree(host.cwd, tree)
})
afterAll(async () => { await host.dispose() })

/** One call through the host's pipeline (the local fast path: dsh-fs-local), its canonical value. */
async function list(args: Record<string, unknown>): Promise<Listing> {
  const result = await execTool(host.ctx, 'list_directory', args)
  if (result.isError) throw new Error(JSON.stringify(result.error))
  return result.value as Listing
}

describe('more entries than one slice', () => {
  it('sort=size orders every entry by its size, largest first', async () => {
    const value = await list({ path: 'big', sort: 'size', limit: 1000 })
    const sizes = value.entries.map((entry) => entry.size ?? -1)
    expect(sizes).toHaveLength(FILES)
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a))
    expect(sizes[0]).toBe(FILES - 1)
  })

  it('followed links are typed by what they point at, dangling ones as other', async () => {
    const value = await list({ path: 'links', limit: 1000 })
    expect(value.stats).toMatchObject({ total: 300, files: 150, others: 150 })
  })

  it('a recursive listing past a full window counts a directory of more than a slice exactly', async () => {
    const full = await list({ path: '.', recursive: true, limit: 1000, sort: 'size' })
    const cut = await list({ path: '.', recursive: true, limit: 2, sort: 'size' })
    expect(cut.stats).toEqual(full.stats)
  })
})
