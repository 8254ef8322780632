import { afterAll, describe, expect, it } from 'vitest'
import { LocalHost } from '../src/local/host.ts'
import { runForeground } from '../src/shells/foreground.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import { marker, pidsWithMarker } from './harness.ts'

describe('runForeground', () => {
  const local = new LocalHost('bash_bg', KILL_POLICY)
  afterAll(() => local.dispose())

  // The abort listener used to be added only once the process had started: an abort in between was lost.
  it('an abort while the process is starting stops it and reports the abort', async () => {
    const mark = marker('abortstart')
    const controller = new AbortController()
    const started = local.start({ argv: ['bash', '-c', `exec -a ${mark} sleep 30`], cwd: process.cwd(), env: process.env }, 'fg-abortstart')
    const pending = runForeground(started, { timeoutMs: 3000, maxOutputBytes: 1000, signal: controller.signal })
    // spawn() has returned, its 'spawn' event has not fired yet.
    controller.abort()
    const result = await pending
    expect(result).toMatchObject({ aborted: true, timed_out: false })
    expect(pidsWithMarker(mark)).toEqual([])
  })
})
