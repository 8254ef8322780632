/**
 * Races against read_file's containment: a swapper process exchanges paths in the workspace
 * (renameat2 RENAME_EXCHANGE) for the whole run while read_file reads through them. Every answer
 * must be the inside content, a refusal, or "changed while it was being read" — never a byte of
 * the outside file — on the product's dsh-fs-sandbox and the bare dsh-fs-local.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import * as Read from '../../tool-read/src/index.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { COMPOSITIONS } from '../src/fixture.ts'
import { buildSwapper, startSwapper } from '../src/swapper.ts'

const READS = runs(2000, 200)
const SECRET = 'TOP-SECRET'

/** Text in UTF-8 and in windows-1252 (the second goes through every phase: head, UTF-8 scan, detection sample, decode). */
const contents = (marker: string) => ({
  utf8: Array.from({ length: 3000 }, (_, i) => `${marker} line ${i + 1}`).join('\n') + '\n',
  latin: iconv.encode(Array.from({ length: 3000 }, (_, i) => `${marker} café ${i + 1}`).join('\n') + '\n', 'windows-1252'),
})

let command: string[]
let tools: string

beforeAll(async () => {
  tools = await makeTmpDir('swapper-')
  command = await buildSwapper(tools)
})
afterAll(async () => { await removeTmpDir(tools) })

for (const [provider, composition] of COMPOSITIONS) {
  describe(`a swapper exchanging paths during ${READS} reads (${provider})`, () => {
    let host: Host
    let outside: string
    beforeAll(async () => {
      host = await bootHost(composition)
      await host.ctx.plugin(Read, {})
      outside = await makeTmpDir('outside-')
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(outside)
    })

    /** Write the inside and outside twins of `name` in both encodings. */
    async function twins(inside: string, out: string): Promise<void> {
      for (const [suffix, pick] of [['txt', 'utf8'], ['lat', 'latin']] as const) {
        await writeFile(join(inside, `f.${suffix}`), contents('INSIDE')[pick])
        await writeFile(join(out, `f.${suffix}`), contents(SECRET)[pick])
      }
    }

    async function race(label: string, a: string, b: string, paths: string[]): Promise<void> {
      const tally = { inside: 0, refused: 0, changed: 0, other: 0 }
      const swapper = await startSwapper(command, a, b)
      let swaps = 0
      try {
        for (let i = 0; i < READS; i++) {
          const args = { file_path: paths[i % paths.length], ...i % 3 === 0 ? { offset: 2900 } : {} }
          const result = await withinMs(20_000, `read ${JSON.stringify(args)}`, execTool(host.ctx, 'read_file', args))
          const text = textOf(result)
          // Not one outside byte: the marker, or the outside file's own lines.
          expect(text, text.slice(0, 300)).not.toContain(SECRET)
          if (!result.isError) {
            expect(text).toContain('INSIDE')
            tally.inside++
          } else if (text.includes('outside the workspace')) tally.refused++
          else if (text.includes('changed while it was being read')) tally.changed++
          else {
            expect(text).toMatch(/^Error: cannot read "[^"]*": (file not found|it vanished while being read|the path loops|not a regular file|it is a directory)/)
            tally.other++
          }
        }
      } finally {
        swaps = await swapper.stop()
      }
      console.log(`${provider}, ${label}: ${swaps} exchanges during ${READS} reads — ${JSON.stringify(tally)}`)
      expect(swaps).toBeGreaterThan(0)
      expect(tally.inside + tally.refused + tally.changed + tally.other).toBe(READS)
    }

    it('the file itself exchanged with a symlink to the outside file (text, legacy text, a notebook read whole)', async () => {
      const dir = join(host.cwd, 'final')
      await mkdir(dir)
      await twins(dir, outside)
      const notebook = (marker: string) => JSON.stringify({ metadata: {}, cells: [{ cell_type: 'markdown', source: [`${marker} cell`] }] })
      await writeFile(join(dir, 'f.ipynb'), notebook('INSIDE'))
      await writeFile(join(outside, 'f.ipynb'), notebook(SECRET))
      for (const ext of ['txt', 'lat', 'ipynb']) await symlink(join(outside, `f.${ext}`), join(dir, `alt.${ext}`))
      // One swapper per file.
      const others = [
        await startSwapper(command, join(dir, 'f.lat'), join(dir, 'alt.lat')),
        await startSwapper(command, join(dir, 'f.ipynb'), join(dir, 'alt.ipynb')),
      ]
      try {
        await race('final component ↔ symlink', join(dir, 'f.txt'), join(dir, 'alt.txt'), ['final/f.txt', 'final/f.lat', 'final/f.ipynb'])
      } finally {
        for (const other of others) await other.stop()
      }
    }, LONG_TEST_MS)

    it('a parent directory exchanged with a symlink to an outside directory', async () => {
      const dir = join(host.cwd, 'parent')
      await mkdir(join(dir, 'd'), { recursive: true })
      const out = join(outside, 'd')
      await mkdir(out)
      await twins(join(dir, 'd'), out)
      await symlink(out, join(dir, 'l'))
      await race('parent ↔ symlink to an outside dir', join(dir, 'd'), join(dir, 'l'), ['parent/d/f.txt', 'parent/d/f.lat'])
    }, LONG_TEST_MS)

    it('a parent directory exchanged with one whose files are symlinks out', async () => {
      const dir = join(host.cwd, 'links')
      await mkdir(join(dir, 'd'), { recursive: true })
      await mkdir(join(dir, 'e'))
      const out = join(outside, 'e')
      await mkdir(out)
      await twins(join(dir, 'd'), out)
      await symlink(join(out, 'f.txt'), join(dir, 'e/f.txt'))
      await symlink(join(out, 'f.lat'), join(dir, 'e/f.lat'))
      await race('parent ↔ dir of symlinks out', join(dir, 'd'), join(dir, 'e'), ['links/d/f.txt', 'links/d/f.lat'])
    }, LONG_TEST_MS)
  })
}
