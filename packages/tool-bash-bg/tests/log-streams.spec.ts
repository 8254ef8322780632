/** The log's stream runs (kept for host 0.1.7, which reads each stream as its own source): each stream's bytes found back in order. */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { LogWriter } from '../src/local/log-writer.ts'

let dir = ''
beforeAll(async () => { dir = await makeTmpDir() })
afterAll(async () => { await removeTmpDir(dir) })

it('finds each stream\'s bytes in an interleaved log, from any offset of its own, within a limit', async () => {
  const path = join(dir, 'bg-runs01.log')
  const writer = new LogWriter(path, 1 << 20, 'bash_bg', undefined, true)
  const out = new PassThrough()
  const err = new PassThrough()
  writer.attach(out, 'stdout')
  writer.attach(err, 'stderr')
  for (const [stream, text] of [[out, 'a1'], [out, 'a2\n'], [err, 'E1\n'], [out, 'b\n'], [err, 'E2\n']] as const) {
    stream.write(text)
    await new Promise((resolve) => setImmediate(resolve))
  }
  writer.close()
  const log = readFileSync(path)
  expect(log.toString()).toBe('a1a2\nE1\nb\nE2\n')
  const text = (stream: 'stdout' | 'stderr', from: number, limit: number) =>
    Buffer.concat(writer.pieces(stream, from, limit).map((piece) => log.subarray(piece.at, piece.at + piece.length))).toString()
  expect(text('stdout', 0, 100)).toBe('a1a2\nb\n')
  expect(text('stderr', 0, 100)).toBe('E1\nE2\n')
  expect(text('stdout', 3, 3)).toBe('2\nb')
  expect(text('stderr', 6, 10)).toBe('')
  // Without `streams` nothing is kept.
  const plain = new LogWriter(join(dir, 'bg-runs02.log'), 100, 'bash_bg')
  expect(plain.pieces('stdout', 0, 10)).toEqual([])
  plain.close()
})
