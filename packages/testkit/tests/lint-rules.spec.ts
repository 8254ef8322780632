/**
 * The lint gate is type-aware: the repository's own config, run as `npm run lint` and the pre-commit
 * hook run it, refuses a lost promise, a promise where a value is expected, a switch that misses a
 * case, a cast that changes nothing, an unawaited return inside try and a repeated condition, and
 * accepts the deliberate forms.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../..')
const probe = `const started = async (): Promise<number> => 1
started()
void started()
started().catch((error: unknown) => { console.error(error) })
;[1].forEach(async () => { await started() })
if (started()) console.log('always')
type Kind = 'a' | 'b'
export function pick(kind: Kind): number {
  switch (kind) {
    case 'a': return 1
  }
  return 0
}
export function pickAll(kind: Kind): number {
  switch (kind) {
    case 'a': return 1
    default: return 0
  }
}
export const same = (n: number): number => (n as number) + 1
export async function guarded(): Promise<number> {
  try {
    return started()
  } catch {
    return 0
  }
}
export function twice(n: number): number {
  if (n > 1) return 1
  else if (n > 1) return 2
  return 0
}
`

let dir: string
let found: { rule: string, line: number }[]

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lint-rules-'))
  await writeFile(join(dir, 'probe.ts'), probe)
  const oxlint = join(root, 'node_modules/.bin/oxlint')
  const run = await promisify(execFile)(oxlint, ['-c', join(root, '.oxlintrc.json'), '--type-aware', '-f', 'json', join(dir, 'probe.ts')], { cwd: root })
    .then(({ stdout }) => stdout, (error: { stdout?: string }) => error.stdout ?? '')
  const report = JSON.parse(run) as { diagnostics: { code: string, labels: { span: { line: number } }[] }[] }
  found = report.diagnostics.map((d) => ({ rule: d.code, line: d.labels[0]?.span.line ?? 0 }))
}, 60_000)

afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

/** The rules reported on the probe's line that reads `text` (trimmed). */
const lineOf = (text: string): number => probe.split('\n').findIndex((line) => line.trim() === text) + 1
const at = (text: string): string[] => found.filter((f) => f.line === lineOf(text)).map((f) => f.rule)

describe('the lint gate', () => {
  it('refuses a promise nobody awaits, and accepts one voided or given a handler', () => {
    expect(at('started()')).toEqual(['typescript(no-floating-promises)'])
    expect(at('void started()')).toEqual([])
    expect(at('started().catch((error: unknown) => { console.error(error) })')).toEqual([])
  })

  it('refuses an async callback where a void one is expected, and a promise as a condition', () => {
    expect(at(';[1].forEach(async () => { await started() })')).toEqual(['typescript(no-misused-promises)'])
    expect(at("if (started()) console.log('always')")).toEqual(['typescript(no-misused-promises)'])
  })

  it('refuses a switch that misses a case; a default branch handles the rest', () => {
    const switches = probe.split('\n').flatMap((line, i) => line.trim() === 'switch (kind) {' ? [i + 1] : [])
    expect(switches).toHaveLength(2)
    expect(found.filter((f) => switches.includes(f.line))).toEqual([{ rule: 'typescript(switch-exhaustiveness-check)', line: switches[0] }])
  })

  it('refuses a cast that does not change the type', () => {
    expect(at('export const same = (n: number): number => (n as number) + 1')).toEqual(['typescript(no-unnecessary-type-assertion)'])
  })

  it('refuses a promise returned unawaited from inside try, where the catch would never see its rejection', () => {
    expect(at('return started()')).toEqual(['typescript(return-await)'])
  })

  it("runs first-party's duplicate-code rules", () => {
    expect(at('else if (n > 1) return 2')).toEqual(['sonarjs(no-identical-conditions)'])
  })

  it('finds nothing else in the probe (eslint no-dupe-else-if also sees the repeated condition)', () => {
    expect(found.map((f) => f.rule).sort()).toEqual([
      'eslint(no-dupe-else-if)', 'sonarjs(no-identical-conditions)', 'typescript(no-floating-promises)',
      'typescript(no-misused-promises)', 'typescript(no-misused-promises)', 'typescript(no-unnecessary-type-assertion)',
      'typescript(return-await)', 'typescript(switch-exhaustiveness-check)',
    ])
  })
})
