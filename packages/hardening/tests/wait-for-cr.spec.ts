/**
 * Issue 33, finding 14: progress output that ends its lines with a lone CR (`10%\r50%\rReady`) never matched
 * `^Ready`: wait_for split lines at LF only. Now a lone CR ends a line for matching, as it does for read_file, in
 * both compositions; a CRLF split across two writes is one line end, not an empty line. A matched line's terminal
 * controls reach the model escaped (finding 15's rule for output).
 */
import { describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { COMPOSITIONS, sharedHost } from '../src/compositions.ts'
import { withinMs } from '../src/budget.ts'
import { markChildren } from '../src/procs.ts'

type Value = { wait?: string, matched_line?: string, last_lines?: string[], world?: string }

const mark = markChildren('waitcr')

describe.each(COMPOSITIONS)('wait_for on CR-only progress, through $name', ({ boot, world }) => {
  const host = sharedHost(boot, mark)

  const wait = async (command: string, waitFor: string, timeout = 20_000) => {
    const result = await withinMs(60_000, command, execTool(host().ctx, 'bash_bg', { command, run_in_background: true, wait_for: waitFor, timeout }))
    expect((result.value as Value).world).toBe(world)
    return result
  }

  it('matches ^Ready in 10%\\r50%\\rReady (the issue\'s case), and the line is Ready alone', async () => {
    const result = await wait("printf '10%%\\r50%%\\rReady\\n'; sleep 60", '^Ready$')
    expect(result.value as Value).toMatchObject({ wait: 'matched', matched_line: 'Ready' })
    expect(textOf(result)).toContain('Matched wait_for: Ready\n')
  })

  it('a line ended by a lone CR matches before anything follows it', async () => {
    const result = await wait("printf '10%%\\r50%%\\rReady\\r'; sleep 60", '^Ready')
    expect(result.value as Value).toMatchObject({ wait: 'matched', matched_line: 'Ready' })
  })

  it('each CR-ended piece is a line: ^50%$ matches the middle one', async () => {
    const result = await wait("printf '10%%\\r50%%\\r100%%\\r'; sleep 60", '^50%$')
    expect(result.value as Value).toMatchObject({ wait: 'matched', matched_line: '50%' })
  })

  it('a matched line holding terminal controls reaches the model escaped', async () => {
    const result = await wait("printf '\\033[32mready\\033[0m\\n'; sleep 60", 'ready')
    expect(result.value as Value).toMatchObject({ wait: 'matched', matched_line: '\x1b[32mready\x1b[0m' })
    expect(textOf(result)).toContain('Matched wait_for: \\x1b[32mready\\x1b[0m\n')
  })

  it('a CRLF split across two writes ends one line: no empty line between, so ^$ never matches', async () => {
    const result = await wait("printf 'one\\r'; sleep 0.3; printf '\\ntwo\\r\\n'; sleep 60", '^$', 2000)
    expect(result.value as Value).toMatchObject({ wait: 'timeout', last_lines: ['one', 'two'] })
  })
})
