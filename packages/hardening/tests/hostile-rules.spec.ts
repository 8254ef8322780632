import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import type { Listing } from '../../tool-list-dir/src/types.ts'
import { COMPOSITIONS } from '../src/fixture.ts'
import { endsWithin } from '../src/blocking.ts'

/**
 * Rules sized to hold the host (issue 33, items 2 and 3), on the product composition and the bare dsh-fs-local:
 * `.gitignore` files of 63,000 and 471,000 rules and of 5,000 glob patterns, `pattern` with two numeric ranges over
 * 5,000 names, and `ignore` with 300 long globs or 100 costly ones. Each listing ends with a true answer or a clear
 * refusal, in bounded memory.
 */
const MB = 1024 * 1024

async function call(host: Host, args: Record<string, unknown>): Promise<{ text: string, value?: Listing, isError: boolean }> {
  const result = await execTool(host.ctx, 'list_directory', args)
  return { text: textOf(result), isError: result.isError, ...result.isError ? {} : { value: result.value as Listing } }
}

/** A generated .gitignore of `count` rules: literal names, anchored paths, endings, and every 1000th a glob. */
function manyRules(count: number): string {
  return Array.from({ length: count }, (_, index) => index % 1000 === 999
    ? `gen/**/p${index}?.tmp`
    : [`module-name${index}.js`, `/out/file-o${index}.js`, `*.ext${index}`, `!keep-me${index}.js`, `dir-${index}/`][index % 5]).join('\n')
}

/** What git itself shows of `files` (check-ignore leaves the ignored ones out). */
function gitShows(root: string, files: readonly string[]): string[] {
  let hidden: string[] = []
  try {
    hidden = execFileSync('git', ['check-ignore', '--stdin'], { cwd: root, input: files.join('\n'), encoding: 'utf8', maxBuffer: 64 * MB }).trim().split('\n')
  } catch (error) {
    if ((error as { status?: number }).status !== 1) throw error // 1: none ignored
  }
  return files.filter((file) => !hidden.includes(file))
}

for (const [provider, composition] of COMPOSITIONS) {
  describe(`rules sized to hold the host (${provider})`, () => {
    let host: Host
    let ws: string
    beforeAll(async () => {
      ws = await makeTmpDir('rules-')
      host = await bootHost({ cwd: ws, ...composition })
      await host.ctx.plugin(ListDir, { maxEntries: 1000 })
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(ws)
    })

    /** A git work tree at `name` with `.gitignore` text and `files` (empty), nothing tracked. */
    function repo(name: string, gitignore: string, files: readonly string[]): string {
      const root = join(ws, name)
      mkdirSync(root)
      execFileSync('git', ['init', '-q'], { cwd: root })
      writeFileSync(join(root, '.gitignore'), gitignore)
      for (const file of files) {
        mkdirSync(join(root, file, '..'), { recursive: true })
        writeFileSync(join(root, file), '')
      }
      return root
    }

    it('a 1 MB .gitignore of 63,000 rules: the listing ends, and shows exactly what git shows', async () => {
      const rules = manyRules(63_000)
      expect(rules.length).toBeGreaterThan(0.9 * MB)
      const files = [
        'module-name0.js', 'module-name5.js', 'module-name6.js', 'out/file-o1.js', 'out/file-o2.js', 'f.ext2', 'f.ext3', 'keep-me3.js',
        'keep-me8.js', 'plain.txt', 'gen/a/p999x.tmp', 'gen/a/p999xx.tmp', 'sub/module-name10.js', 'file-o1.js', 'dir-4', 'dir-9/in.txt',
        ...Array.from({ length: 500 }, (_, index) => `many/f${index}.ext${index % 50}`),
      ]
      const root = repo('rules-63k', rules, files)
      const { value } = await endsWithin(20_000, 'a listing under 63,000 rules', call(host, { path: root, recursive: true, depth: 5, files_only: true, limit: 1000 }))
      const shown = value!.entries.map((entry) => entry.path)
      expect(value!.gitignore_refused).toBeUndefined()
      expect(value!.truncated).toBeUndefined()
      expect(new Set(shown)).toEqual(new Set(gitShows(root, ['.gitignore', ...files])))
      expect(shown).toContain('keep-me3.js') // re-included by !keep-me3.js
      expect(shown).not.toContain('out/file-o1.js')
    })

    it('a 7.4 MB .gitignore of 471,000 rules is not applied, and the listing says so, in bounded memory', async () => {
      const rules = manyRules(471_000)
      expect(rules.length).toBeGreaterThan(7.4 * MB)
      const root = repo('rules-471k', rules, ['module-name0.js', 'plain.txt'])
      const before = process.memoryUsage().rss
      const { text, value } = await endsWithin(20_000, 'a listing under 471,000 rules', call(host, { path: root, recursive: true }))
      expect(process.memoryUsage().rss - before).toBeLessThan(400 * MB)
      expect(value!.gitignore_refused).toEqual(['.gitignore'])
      expect(text).toContain('[Not applied (too many rules to match): .gitignore]')
      expect(value!.entries.map((entry) => entry.name)).toContain('module-name0.js') // shown: the file's rules are not applied
    })

    it('5,000 glob patterns in a nested .gitignore: not applied past 1,000, said; the root rules still apply', async () => {
      const root = repo('patterns', '*.log\n', ['a.log', 'sub/x.txt', 'sub/y1b.tmp'])
      writeFileSync(join(root, 'sub/.gitignore'), Array.from({ length: 5000 }, (_, index) => `*x*${index}?b.tmp`).join('\n'))
      const { text, value } = await endsWithin(20_000, 'a listing under 5,000 patterns', call(host, { path: root, recursive: true }))
      expect(value!.gitignore_refused).toEqual(['sub/.gitignore'])
      expect(text).toContain('[Not applied (too many rules to match): sub/.gitignore]')
      expect(value!.entries.map((entry) => entry.path)).toEqual(['.git', 'sub', 'sub/.gitignore', 'sub/x.txt', 'sub/y1b.tmp', '.gitignore'])
      expect(value!.gitignored).toBe(1)
    })

    it('pattern *{1..9999}*{1..9999}* over 5,000 names ends, matching exactly the names with two such numbers', async () => {
      const dir = join(ws, 'numbered')
      mkdirSync(dir)
      const names = Array.from({ length: 5000 }, (_, index) => `f${index % 100}-${index}-x${index % 7}.txt`)
      for (const name of names) writeFileSync(join(dir, name), '')
      const { value } = await endsWithin(20_000, 'a listing with two numeric ranges', call(host, { path: dir, pattern: '*{1..9999}*{1..9999}*', limit: 1000 }))
      // Two numbers from 1 to 9999 as decimal text, not padded: a digit run holding them, as a regex over the name.
      const expected = names.filter((name) => /^.*?(?:[1-9]\d{0,3}).*?(?:[1-9]\d{0,3}).*$/.test(name))
      expect(value!.stats.total).toBe(expected.length)
    })

    it('ignore: 300 long globs are refused naming ignore; 100 costly ones over 5,000 names end', async () => {
      const dir = join(ws, 'long-names')
      mkdirSync(dir)
      for (let index = 0; index < 5000; index++) writeFileSync(join(dir, `${'a'.repeat(200)}${index}`), '')
      const long = Array.from({ length: 300 }, (_, index) => `*${'a'.repeat(60)}b${index}*`)
      const refused = await endsWithin(20_000, 'a listing with 300 ignore globs', call(host, { path: dir, ignore: long }))
      expect(refused.text).toBe('Error: ignore has 300 globs of 19690 characters in all; at most 100 globs of 4096 characters are matched — '
        + 'merge them (e.g. "*.log" for many names), or narrow path or pattern')
      const costly = Array.from({ length: 100 }, () => `*${'a'.repeat(36)}b*`)
      const { value } = await endsWithin(20_000, 'a listing with 100 costly ignore globs', call(host, { path: dir, ignore: costly, limit: 10 }))
      expect(value!.stats.total).toBe(5000) // no name holds a b
      const hiding = await endsWithin(20_000, 'a listing whose ignore hides all', call(host, { path: dir, ignore: [...costly.slice(1), '*a?a*1'] }))
      expect(hiding.value!.stats.total).toBe(4500) // the 500 names ending in 1 (1, 11, …, 4991) hidden
    })
  })
}
