/**
 * Issue 33, finding 4: a 37-character wait_for that re2js runs in linear time, but at about 0.3 s per 4 KB line of
 * word characters (counted repetitions make a program of ~6,000 instructions). It used to run on the host's thread:
 * one chunk of such lines held the event loop for seconds and a wait outlived its timeout. Now each line is tested on
 * a matching thread. Held, in both compositions: the host's timers stay on time, the wait ends at its timeout with
 * the true answer, a matching line after the costly ones still matches, and a flood past the matcher's backlog says
 * how many lines it never tested.
 */
import { describe, expect, it } from 'vitest'
import { execTool, loopLateness, textOf } from '@gencode-ai/testkit'
import { COMPOSITIONS, sharedHost } from '../src/compositions.ts'
import { withinMs } from '../src/budget.ts'
import { markChildren } from '../src/procs.ts'

const PATTERN = '(\\w{1,999}|\\d{1,999}|[a-z]{1,999})+\\s'
/** `count` lines of 4,096 word characters (no whitespace, so PATTERN matches none of them). */
const wordLines = (count: number) => `yes "$(head -c 4096 /dev/zero | tr '\\0' a)" | head -n ${count}`
/** Generous: the old engine held the loop 12–28 s here; a hang or a stall of seconds fails. */
const LATENESS_BOUND_MS = 2000

type Value = { wait?: string, matched_line?: string, last_lines?: string[], untested_lines?: number, world?: string }

const mark = markChildren('waitcost')

describe.each(COMPOSITIONS)('wait_for with a costly pattern, through $name', ({ boot, world }) => {
  const host = sharedHost(boot, mark)

  const wait = (command: string, timeout: number) => loopLateness(withinMs(60_000, command.slice(0, 60), execTool(
    host().ctx, 'bash_bg', { command, run_in_background: true, wait_for: PATTERN, timeout },
  )))

  it('keeps the event loop on time and ends at its timeout with no line matched (60 costly lines)', async () => {
    expect(PATTERN).toHaveLength(37)
    const { result, worstMs } = await wait(`${wordLines(60)}; sleep 60`, 4000)
    const value = result.value as Value
    expect(value).toMatchObject({ wait: 'timeout' })
    expect(value.last_lines?.at(-1)).toBe(`${'a'.repeat(300)}…`)
    expect((result.value as Value).world).toBe(world)
    expect(worstMs).toBeLessThan(LATENESS_BOUND_MS)
  })

  it('still matches a line that comes after the costly ones', async () => {
    const { result, worstMs } = await wait(`${wordLines(3)}; echo 'server ready'; sleep 60`, 50_000)
    expect(result.value as Value).toMatchObject({ wait: 'matched', matched_line: 'server ready' })
    expect(textOf(result)).toContain('Matched wait_for: server ready')
    expect((result.value as Value).world).toBe(world)
    expect(worstMs).toBeLessThan(LATENESS_BOUND_MS)
  })

  // Bursts the seam's pump logs whole (under its 256 KiB window), but past the matcher's 1 Mi-character backlog.
  it('says how many lines it never tested when they come faster than it can match (1.3 MB in bursts)', async () => {
    const bursts = `for burst in $(seq 8); do ${wordLines(40)}; sleep 0.3; done`
    const { result, worstMs } = await wait(`${bursts}; echo 'server ready'; sleep 60`, 6000)
    const value = result.value as Value
    expect(value).toMatchObject({ wait: 'timeout' })
    expect(value.untested_lines).toBeGreaterThan(0)
    expect(textOf(result)).toContain(`[${value.untested_lines} lines came faster than wait_for could test them and were not tested: read the file for them]`)
    expect((result.value as Value).world).toBe(world)
    expect(worstMs).toBeLessThan(LATENESS_BOUND_MS)
  })
})
