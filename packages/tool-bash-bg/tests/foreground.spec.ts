import { describe, expect, it } from 'vitest'
import { runForeground } from '../src/shells/foreground.ts'
import { localWorld } from '../src/local/host.ts'
import { marker, pidsWithMarker } from './harness.ts'

describe('runForeground', () => {
  // The abort listener used to be added only once the process had started: an abort in between was lost.
  it('an abort while the process is starting stops it and reports the abort', async () => {
    const mark = marker('abortstart')
    const controller = new AbortController()
    const pending = runForeground(localWorld, { argv: ['bash', '-c', `exec -a ${mark} sleep 30`], cwd: process.cwd(), env: process.env }, 3000, 1000, controller.signal)
    // spawn() has returned, its 'spawn' event has not fired yet.
    controller.abort()
    const result = await pending
    expect(result).toMatchObject({ aborted: true, timed_out: false })
    expect(pidsWithMarker(mark)).toEqual([])
  })
})
