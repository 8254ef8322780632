/**
 * bash_bg under generated arguments. Safety first: a generated string is never run as code.
 * Commands come from a fixed safe set; generated strings reach bash only as single-quoted data
 * (`printf '%s' '<s>'`), as the name of a program under a directory that does not exist
 * (`./.no-such-dir/'<s>'`: the kernel stops at the missing directory, whatever follows), or as
 * syntax made of punctuation alone (no letters, digits, `/`, `.`, `~`, `$` or backquote, so no
 * program can be named). Everything runs in the host's throwaway temp cwd, timeouts are small,
 * and every shell is killed at the end of each case; /proc is scanned for leftovers.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import { argsFor, nastyNumber, nastyString } from '../src/arbitraries.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { markChildren, markedPids, sq, until } from '../src/procs.ts'

const mark = markChildren('bashfuzz')
let host: Host
let shells: ShellRegistry
beforeAll(async () => {
  host = await bootHost()
  await host.ctx.plugin(BashBg, { timeoutMs: 300, waitTimeoutMs: 300, maxTimeoutMs: 1000, maxLogBytes: 64 * 1024, maxOutputBytes: 4096 })
  shells = host.ctx.get('backgroundShells') as ShellRegistry
})
afterAll(async () => { await host.dispose() })

const SAFE = [
  'true', 'echo x', 'sleep 0.01', 'exit 3', 'echo err >&2; exit 1', 'printf "%s\\n" é文件😀',
  'head -c 100000 /dev/zero', 'sleep 0.5', "trap '' TERM; sleep 0.5", 'kill -TERM $$', 'sleep 0.5 & echo started',
  '( (sleep 0.5 &) & ); echo forked',
]
/** Punctuation and whitespace only: bash parses it, but it cannot name a program. */
const SYNTAX = fc.string({ unit: fc.constantFrom(...'()[]{};|&<>\'"\\!*?#=,:-+^% \t\n'.split(''), '😀', 'é', '\u202e'), maxLength: 24 })

const command = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...SAFE) },
  { weight: 2, arbitrary: nastyString.map((s) => `printf '%s' ${sq(s)}`) },
  { weight: 2, arbitrary: nastyString.map((s) => `./.no-such-dir/${sq(s)}`) },
  { weight: 2, arbitrary: SYNTAX },
  // Past Linux's 128 KiB limit for one argv string.
  { weight: 1, arbitrary: fc.integer({ min: 100_000, max: 300_000 }).map((n) => `./.no-such-dir/${'x'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', '\t ') },
)

const bashArgs = argsFor({
  command,
  timeout: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 1000 }) }, { weight: 1, arbitrary: nastyNumber }),
  description: nastyString,
  run_in_background: fc.boolean(),
  // A regex that matches, one that never does, an invalid one, or anything.
  wait_for: fc.oneof(fc.constantFrom('x', 'started', '^$', 'never-printed', '(', '[a-'), nastyString),
}, ['command'])

const PARAMS = ['command', 'timeout', 'description', 'run_in_background', 'wait_for']

it('bash_bg: generated arguments never throw past the pipeline, hang, leave a process, or give an error that names nothing', async () => {
  const tally = { calls: 0, foreground: 0, background: 0, errors: 0 }
  await fc.assert(fc.asyncProperty(bashArgs, async (args) => {
    const label = `bash_bg ${JSON.stringify(args)?.slice(0, 200)}`
    let result
    try {
      result = await withinMs(20_000, label, execTool(host.ctx, 'bash_bg', args))
    } finally {
      // Kill every shell this case started, then check the world: nothing of ours is left.
      await Promise.all(shells.running().map((shell) => shells.stop(shell.id, { signal: 'SIGKILL', force: true, timeoutMs: 1000 }, undefined)))
      await until(() => markedPids(mark).length === 0, `no process left after ${label}`)
    }
    tally.calls++
    const text = textOf(result)
    if (!result.isError) {
      const value = result.value as { kind: string }
      if (value.kind === 'background') tally.background++
      else tally.foreground++
      expect(text.length).toBeGreaterThan(0)
      return
    }
    tally.errors++
    if (process.env.FUZZ_SHOW === '1') console.log(text.slice(0, 160))
    expect(text.startsWith('Error: ')).toBe(true)
    expect(text.length).toBeLessThan(2000)
    const namesSomething = PARAMS.some((param) => text.includes(param))
      || text.includes('invalid arguments')
      || text.includes('must be losslessly JSON-serializable')
    expect(namesSomething, text).toBe(true)
  }), { numRuns: runs(10_000, 1_000) })
  console.log(`bash_bg fuzz: ${tally.calls} calls, ${tally.foreground} foreground results, ${tally.background} background shells, ${tally.errors} clear errors`)
  expect(tally.calls).toBe(runs(10_000, 1_000))
  expect(markedPids(mark)).toEqual([])
}, LONG_TEST_MS)
