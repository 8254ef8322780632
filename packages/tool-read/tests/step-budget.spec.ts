/**
 * One byte budget per agent step, through the real agent loop (scripted model): parallel read_file calls of one model
 * response share maxBytesPerStep; a cut names the exact offset to continue, a call past the budget shows no text and
 * names where to start; calls in later steps are whole.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { runTurn, type ScriptEntry, sessionEvents, textTurn, toolResults, toolTurn, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

/** A 100,000-byte file: 100 lines of 999 characters. */
const fileLines = (n: number) => Array.from({ length: 100 }, (_, i) => `${n}:${i + 1}:`.padEnd(999, String.fromCharCode(97 + n)))

/** The numbered rows of a result: [line number, text]. */
function rows(text: string): [number, string][] {
  return text.split('\n').flatMap((row) => {
    const match = /^ *(\d+)\t(.*)$/u.exec(row)
    return match === null ? [] : [[Number(match[1]), match[2] ?? ''] as [number, string]]
  })
}

const STEP_CUT = 'this step\'s reads reached maxBytesPerStep'

it('ten parallel reads of 100 KB files in one step show at most 262,144 bytes; each cut continues exactly in later steps, which are whole', async () => {
  const script: ScriptEntry[] = [
    toolTurn(...Array.from({ length: 10 }, (_, n) => ({ id: `p${n}`, name: 'read_file', args: { file_path: `f${n}.txt` } }))),
    textTurn('first step done'),
  ]
  host = await readHost({}, { script })
  const on = host
  await Promise.all(Array.from({ length: 10 }, (_, n) => writeFile(join(on.cwd, `f${n}.txt`), `${fileLines(n).join('\n')}\n`)))
  const agent = on.agent()
  const first = toolResults(await runTurn(on.ctx, agent))
  expect(first.map((result) => result.isError)).toEqual(Array.from({ length: 10 }, () => false))
  // Rendered rows (number, TAB, text, newline): more than the file text they hold.
  const shown = first.reduce((sum, result) => sum + rows(result.text).reduce((bytes, [n, line]) => bytes + Buffer.byteLength(`${n}\t${line}\n`), 0), 0)
  expect(shown).toBeLessThanOrEqual(262_144)
  expect(shown).toBeGreaterThan(200_000)

  // Where each file continues: after its last shown line, or at the offset a call past the budget names.
  const next = first.map((result) => {
    const offset = /offset=(\d+)/u.exec(result.text)?.[1]
    return offset === undefined ? undefined : Number(offset)
  })
  const cut = first.filter((result) => result.text.includes(STEP_CUT))
  expect(cut.length).toBeGreaterThan(0)
  for (const [n, result] of first.entries()) {
    const got = rows(result.text)
    if (got.length === 100) expect(next[n]).toBeUndefined()
    else expect(next[n]).toBe(got.length + 1)
    if (got.length === 0) expect(result.text).toBe(`(Not read: ${STEP_CUT}. Read it in a later step with offset=1.)`)
  }

  // Each continuation in its own step: whole, and the two parts are the file.
  const later = [...next.entries()].filter(([, offset]) => offset !== undefined)
  for (const [n, offset] of later) script.push(toolTurn({ id: `c${n}`, name: 'read_file', args: { file_path: `f${n}.txt`, offset } }))
  script.push(textTurn('done'))
  await runTurn(on.ctx, agent)
  const all = toolResults(sessionEvents(agent.session))
  for (const [n, offset] of later) {
    const rest = all.find((result) => result.callId === `c${n}`)
    expect(rest?.text).not.toContain('Showing lines')
    const lines = [...rows(first[n]?.text ?? ''), ...rows(rest?.text ?? '')]
    expect(lines.map(([number]) => number)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
    expect(lines.map(([, line]) => line)).toEqual(fileLines(n))
    expect(rows(rest?.text ?? '')[0]?.[0]).toBe(offset)
  }
})

it('a share too short for the first line shows none and names the offset; past the budget nothing is read; a step\'s first call always shows a line', async () => {
  const long = `${'x'.repeat(1500)}\nshort\n`
  host = await readHost({ maxBytes: 1024, maxBytesPerStep: 1536 }, {
    script: [
      toolTurn(
        { id: 'a', name: 'read_file', args: { file_path: 'short.txt' } },
        { id: 'b', name: 'read_file', args: { file_path: 'long.txt' } },
        { id: 'c', name: 'read_file', args: { file_path: 'long.txt', offset: 2 } },
      ),
      toolTurn({ id: 'd', name: 'read_file', args: { file_path: 'long.txt' } }),
      textTurn('done'),
    ],
  })
  await writeFile(join(host.cwd, 'long.txt'), long)
  await writeFile(join(host.cwd, 'short.txt'), 'short\n')
  const [a, b, c, d] = toolResults(await runTurn(host.ctx, host.agent()))
  expect(a?.text).toBe('1\tshort')
  expect(b?.text).toBe(`(No lines shown: ${STEP_CUT}. Use offset=1 in a later step.)`)
  expect(c?.text).toBe(`(Not read: ${STEP_CUT}. Read it in a later step with offset=2.)`)
  // The line is longer than maxBytes: shown anyway, as the first line of any call is.
  expect(d?.text).toBe(`1\t${'x'.repeat(1500)}\n\n(Showing lines 1-1 of 2. Use offset=2 to continue.)`)
})

it('a call no agent made has only its own maxBytes', async () => {
  host = await readHost({ maxBytesPerStep: 1024 })
  await writeFile(join(host.cwd, 'small.txt'), `${'y'.repeat(3000)}\n`)
  const result = await host.ctx.tools.execute({ callId: 'x' as never, name: 'read_file', arguments: { file_path: 'small.txt' }, signal: new AbortController().signal })
  expect(result.isError).toBe(false)
  expect(rows((result.content[0] as { text: string }).text)).toHaveLength(1)
})

it('a window the step\'s budget cut never counts as seen: the same call in a later step gets the full text', async () => {
  const mid = Array.from({ length: 8 }, (_, i) => `${i + 1}`.padEnd(99, '.')).join('\n')
  host = await readHost({ maxBytes: 1024, maxBytesPerStep: 1536 }, {
    script: [
      toolTurn({ id: 'a', name: 'read_file', args: { file_path: 'short.txt' } }, { id: 'b', name: 'read_file', args: { file_path: 'mid.txt' } }),
      toolTurn({ id: 'b2', name: 'read_file', args: { file_path: 'mid.txt' } }),
      toolTurn({ id: 'b3', name: 'read_file', args: { file_path: 'mid.txt' } }),
      textTurn('done'),
    ],
  })
  await writeFile(join(host.cwd, 'short.txt'), 'short\n')
  await writeFile(join(host.cwd, 'mid.txt'), `${mid}\n`)
  const [, cut, whole, again] = toolResults(await runTurn(host.ctx, host.agent()))
  expect(rows(cut?.text ?? '')).toHaveLength(5)
  expect(cut?.text).toContain(STEP_CUT)
  expect(rows(whole?.text ?? '').map(([, line]) => line)).toEqual(mid.split('\n'))
  expect(again?.text).toBe('(Unchanged: lines 1-8 as in call b2 above.)')
})
