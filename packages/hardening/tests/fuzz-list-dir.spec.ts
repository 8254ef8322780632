import fc from 'fast-check'
import { writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import { argsFor, nastyNumber, nastyString, sometimes } from '../src/arbitraries.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { makeFixture } from '../src/fixture.ts'

let host: Host
beforeAll(async () => {
  host = await bootHost()
  await host.ctx.plugin(ListDir, {})
  await makeFixture(host.cwd)
  // The fixture's .git makes it a repository: nested .gitignore files with negation, and heavy directories.
  await writeFile(join(host.cwd, '.gitignore'), '*.txt\n!empty.txt\ndeep/\n')
  await writeFile(join(host.cwd, 'src/.gitignore'), '!*.txt\n*.ts\n')
  await mkdir(join(host.cwd, 'node_modules/pkg'), { recursive: true })
  await writeFile(join(host.cwd, 'src/cli/notes.txt'), 'n')
})
afterAll(async () => { await host.dispose() })

const PARAMS = ['path', 'ignore', 'recursive', 'depth', 'pattern', 'sort', 'reverse', 'directories_only', 'files_only', 'long', 'limit', 'offset'] // \`all\` is a boolean: only the host's type check names it

/** Well-formed values, so the generated calls reach deep into listing, not only validation. */
const good = {
  path: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('.', 'src', 'src/cli', 'dossier é', '.git', 'link-in') },
    { weight: 1, arbitrary: fc.constantFrom('link-out', 'README.md', 'nope', '/etc', '..') },
  ),
  ignore: fc.array(fc.constantFrom('*.ts', '.*', 'src', '?', '[x]', '{a,b}', 'pnpm-lock.yaml'), { maxLength: 4 }),
  recursive: fc.boolean(),
  depth: fc.integer({ min: 1, max: 10 }),
  pattern: fc.constantFrom('*.ts', '**/*.md', 'src/**', '*', '{a,b', '文件*'),
  sort: fc.constantFrom('name', 'size', 'modified', 'type'),
  reverse: fc.boolean(),
  directories_only: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  files_only: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  long: fc.boolean(),
  limit: fc.integer({ min: 1, max: 100 }),
  offset: fc.oneof(
    { weight: 8, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: 3 }) },
    { weight: 1, arbitrary: fc.integer({ min: 0, max: 1000 }) },
  ),
  all: fc.boolean(),
}

const listArgs = fc.oneof(
  // half the runs: valid argument sets (optional keys present or not)
  fc.record(good, { requiredKeys: ['path'] }),
  // the other half: any key nasty, missing, or of the wrong type
  argsFor({
    path: sometimes(good.path, nastyString, 6),
    ignore: fc.array(sometimes(fc.constantFrom('*.ts', '.*', 'src'), nastyString, 6), { maxLength: 4 }),
    recursive: good.recursive,
    depth: sometimes(good.depth, nastyNumber, 6),
    pattern: sometimes(good.pattern, nastyString, 6),
    sort: fc.oneof(good.sort, nastyString),
    reverse: good.reverse,
    directories_only: good.directories_only,
    files_only: good.files_only,
    long: good.long,
    limit: sometimes(good.limit, nastyNumber, 6),
    offset: sometimes(good.offset, nastyNumber, 6),
    all: good.all,
  }, ['path']),
)

it('list_directory: generated arguments never throw past the pipeline, hang, or give an error that names nothing', async () => {
  const tally = { calls: 0, ok: 0, errors: 0 }
  await fc.assert(fc.asyncProperty(listArgs, async (args) => {
    const result = await withinMs(20_000, `list_directory ${JSON.stringify(args)?.slice(0, 200)}`, execTool(host.ctx, 'list_directory', args))
    tally.calls++
    if (!result.isError) {
      tally.ok++
      expect(textOf(result).length).toBeGreaterThan(0)
      return
    }
    tally.errors++
    const text = textOf(result)
    if (process.env.FUZZ_SHOW === '1') console.log(text.slice(0, 160))
    expect(text.startsWith('Error: ')).toBe(true)
    const path = (args as { path?: unknown } | null)?.path
    const namesSomething = PARAMS.some((param) => text.includes(param))
      || (typeof path === 'string' && path !== '' && text.includes(path.slice(0, 20)))
      || text.includes('outside the workspace')
      || text.includes('invalid arguments')
      // the host pipeline's own refusal, before any tool runs (e.g. -0 from JSON.parse('-0'))
      || text.includes('must be losslessly JSON-serializable')
    expect(namesSomething, text).toBe(true)
  }), { numRuns: runs(10_000, 1_000) })
  console.log(`list_directory fuzz: ${tally.calls} calls, ${tally.ok} results, ${tally.errors} clear errors`)
  expect(tally.calls).toBe(runs(10_000, 1_000))
}, LONG_TEST_MS)

/** Arguments that list something (so paging has pages), with a small limit. */
const pagedArgs = fc.record({
  path: fc.constantFrom('.', 'src', 'link-in'),
  recursive: fc.boolean(),
  depth: fc.integer({ min: 1, max: 10 }),
  all: fc.boolean(),
  sort: fc.constantFrom('name', 'size', 'type'),
  reverse: fc.boolean(),
  ignore: fc.array(fc.constantFrom('*.ts', '.*', 'deep'), { maxLength: 2 }),
  limit: fc.integer({ min: 1, max: 7 }),
}, { requiredKeys: ['path', 'limit'] })

it('list_directory: following "Use offset=N to continue." pages through the whole result, nothing lost or repeated', async () => {
  await fc.assert(fc.asyncProperty(pagedArgs, async (args) => {
    const { limit, depth, ...flat } = args
    const rest = flat.recursive ? { ...flat, depth } : flat
    const whole = await execTool(host.ctx, 'list_directory', rest)
    if (whole.isError) return
    const entries = (whole.value as { entries: unknown[] }).entries
    const seen: unknown[] = []
    for (let offset = 0, calls = 0; ; calls++) {
      expect(calls).toBeLessThanOrEqual(entries.length)
      const page = await execTool(host.ctx, 'list_directory', { ...rest, limit, offset })
      expect(page.isError, textOf(page)).toBe(false)
      // siblings_cut marks where a page's own tree is drawn open: a property of the page, not of the entry.
      seen.push(...(page.value as { entries: Record<string, unknown>[] }).entries.map(({ siblings_cut: _cut, ...entry }) => entry))
      const next = /\[Use offset=(\d+) to continue\.\]/.exec(textOf(page))
      if (next === null) break
      offset = Number(next[1])
    }
    expect(seen).toEqual(entries)
  }), { numRuns: runs(1_000, 100) })
}, LONG_TEST_MS)
