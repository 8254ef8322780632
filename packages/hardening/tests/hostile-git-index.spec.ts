import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import type { Listing } from '../../tool-list-dir/src/types.ts'
import { COMPOSITIONS } from '../src/fixture.ts'
import { endsWithin } from '../src/blocking.ts'
import { sparseIndex, v4PathBomb } from '../src/index-file.ts'

/**
 * A crafted `.git/index` (issue 33, items 1, 7 and 11), on the product composition and the bare dsh-fs-local: a
 * version-4 index whose prefix compression decodes to 4 GB of paths, a sparse index of 400,000 directories beside
 * 8,000 ignored files, and a FIFO at `.git/index`. Each listing ends, in bounded memory, with a true answer.
 */
const UNKNOWN_NOTE = 'by .gitignore (tracked or not: no git index read)'

async function list(host: Host, args: Record<string, unknown>): Promise<{ text: string, value: Listing }> {
  const result = await execTool(host.ctx, 'list_directory', args)
  const text = textOf(result)
  if (result.isError) throw new Error(text)
  return { text, value: result.value as Listing }
}

const paths = (value: Listing): string[] => value.entries.map((entry) => entry.path ?? entry.name)

for (const [provider, composition] of COMPOSITIONS) {
  describe(`a crafted .git/index (${provider})`, () => {
    let host: Host
    let ws: string
    let writer: ChildProcess | undefined
    beforeAll(async () => {
      ws = await makeTmpDir('git-index-')
      host = await bootHost({ cwd: ws, ...composition })
      await host.ctx.plugin(ListDir, {})
    })
    afterAll(async () => {
      writer?.kill('SIGKILL')
      await host.dispose()
      await removeTmpDir(ws)
    })

    /** A git work tree at `name` with `*.log` ignored, a kept file and an ignored one; its index is `index` (a FIFO when 'fifo'). */
    function repo(name: string, index: Buffer | 'fifo'): string {
      const root = join(ws, name)
      mkdirSync(root)
      execFileSync('git', ['init', '-q'], { cwd: root })
      writeFileSync(join(root, '.gitignore'), '*.log\n')
      writeFileSync(join(root, 'kept.txt'), 'k')
      writeFileSync(join(root, 'app.log'), 'ignored')
      if (index === 'fifo') execFileSync('mkfifo', [join(root, '.git/index')])
      else writeFileSync(join(root, '.git/index'), index)
      return root
    }

    it('a 2.6 MB version-4 index decoding to 4 GB of paths: the index is unreadable, tracked files unknown, memory bounded', async () => {
      const bomb = v4PathBomb(40_000, 100_000)
      expect(bomb.length).toBeLessThan(3_000_000)
      const root = repo('v4-bomb', bomb)
      const before = process.memoryUsage().rss
      const { text, value } = await endsWithin(20_000, 'a listing over a v4 path bomb', list(host, { path: root, recursive: true }))
      expect(process.memoryUsage().rss - before).toBeLessThan(300 * 1024 * 1024)
      expect(paths(value)).toEqual(['.git', '.gitignore', 'kept.txt'])
      expect(value.tracked_unknown).toBe(true)
      expect(text).toContain(`1 ${UNKNOWN_NOTE}`)
      // Remembered until the index changes: the next listing answers alike.
      expect((await endsWithin(20_000, 'a second listing', list(host, { path: root, recursive: true }))).text).toBe(text)
    })

    it('a sparse index of 400,000 directories beside 8,000 ignored files: each ignored path is looked up by its ancestors', async () => {
      const sparse = Array.from({ length: 400_000 }, (_, index) => `deep/s${index}/`)
      const root = repo('sparse', sparseIndex(['.gitignore', 'kept.txt', 'logs/kept.log'], sparse))
      mkdirSync(join(root, 'logs'))
      for (let file = 0; file < 8000; file++) writeFileSync(join(root, 'logs', `f${file}.log`), '')
      writeFileSync(join(root, 'logs/kept.log'), 'tracked though *.log')
      // A sparse directory present in the work tree: everything under it is tracked, so shown.
      mkdirSync(join(root, 'deep/s399999/inner'), { recursive: true })
      writeFileSync(join(root, 'deep/s399999/inner/x.log'), 'tracked by its sparse ancestor')
      const { value } = await endsWithin(10_000, 'a listing over a sparse index', list(host, { path: root, recursive: true, depth: 10 }))
      expect(value.tracked_unknown).toBeUndefined()
      expect(paths(value)).toEqual([
        '.git', 'deep', 'deep/s399999', 'deep/s399999/inner', 'deep/s399999/inner/x.log', 'logs', 'logs/kept.log', '.gitignore', 'kept.txt',
      ])
      expect(value.gitignored).toBe(8001) // the 8,000 untracked logs and app.log
    })

    it('a FIFO at .git/index: every listing ends at once (no git blocked on it), and the FIFO is never opened', async () => {
      const root = repo('fifo', 'fifo')
      const listed = async (label: string): Promise<void> => {
        const { text, value } = await endsWithin(10_000, label, list(host, { path: root, recursive: true }))
        expect(paths(value)).toEqual(['.git', '.gitignore', 'kept.txt'])
        expect(value.tracked_unknown).toBe(true)
        expect(text).toContain(`1 ${UNKNOWN_NOTE}`)
      }
      for (let call = 1; call <= 3; call++) await listed(`listing ${call} beside a FIFO index`)
      // A writer waiting for a reader: it writes its mark only if something opens the FIFO.
      const mark = join(root, 'opened')
      writer = spawn('sh', ['-c', `echo x > '${join(root, '.git/index')}' && touch '${mark}'`], { stdio: 'ignore' })
      await new Promise((resolve) => setTimeout(resolve, 500))
      await listed('a listing beside a FIFO index with a writer waiting')
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(existsSync(mark)).toBe(false)
      expect(writer.exitCode).toBeNull()
    })
  })
}
