// The capped log and its stream sidecar as one writer makes them (the keeper's for a local shell, the host's for another
// world's): arrival order, the stderr ranges, the cap's marker, a failed write said once, on real files.
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, describe, expect, it } from 'vitest'
import { LogWriter, type StreamName } from '../src/local/log-writer.ts'
import { streamRuns } from '../src/local/stream-runs.ts'

const dir = mkdtempSync(join(tmpdir(), 'bg-log-writer-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let made = 0
const files = () => {
  made++
  return { log: join(dir, `${made}.log`), streams: join(dir, `${made}.streams`) }
}
const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('the log writer', () => {
  it('keeps both streams in arrival order, tells each piece with its stream, and records the stderr ranges in the sidecar', async () => {
    const { log, streams } = files()
    const writer = new LogWriter(log, 1000, 'bash_bg', streams)
    const out = new PassThrough()
    const err = new PassThrough()
    writer.attach(out, 'stdout')
    writer.attach(err, 'stderr')
    const seen: Array<[string, StreamName]> = []
    writer.watchers.add((written, stream) => seen.push([String(written), stream]))
    out.write('one\n')
    await tick()
    expect(existsSync(streams)).toBe(false)
    err.write('two\n')
    await tick()
    err.write('three\n')
    await tick()
    out.write('four')
    await tick()
    writer.close()
    expect(readFileSync(log, 'utf8')).toBe('one\ntwo\nthree\nfour')
    expect(seen).toEqual([['one\n', 'stdout'], ['two\n', 'stderr'], ['three\n', 'stderr'], ['four', 'stdout']])
    expect(streamRuns(streams, 0, writer.bytes)).toEqual([
      { start: 0, end: 4, stream: 'stdout' }, { start: 4, end: 14, stream: 'stderr' }, { start: 14, end: 18, stream: 'stdout' },
    ])
    // No sidecar at all: every byte is stdout.
    expect(streamRuns(join(dir, 'none.streams'), 0, 5)).toEqual([{ start: 0, end: 5, stream: 'stdout' }])
    expect(writer.problem()).toBeUndefined()
  })

  it('stops at the cap with the marker, says so once, and drains what comes after', async () => {
    const { log, streams } = files()
    const writer = new LogWriter(log, 100, 'bash_bg', streams)
    const ended: string[] = []
    writer.enders.add(() => ended.push('capped'))
    const out = new PassThrough()
    writer.attach(out, 'stdout')
    out.write('x'.repeat(300))
    out.write('y'.repeat(300))
    await tick()
    writer.close()
    const text = readFileSync(log, 'utf8')
    expect(text.length).toBe(100)
    expect(text.endsWith('\n[bash_bg: log capped at 100 bytes; later output was discarded]\n')).toBe(true)
    expect(writer).toMatchObject({ capped: true, bytes: 100 })
    expect(ended).toEqual(['capped'])
  })

  it('a write that fails (a full disk) stops capture and says why; a removed log says so too', async () => {
    const { log, streams } = files()
    const writer = new LogWriter(log, 1000, 'bash_bg', streams)
    const err = new PassThrough()
    writer.attach(err, 'stderr')
    // The one injected fault: the log's descriptor swapped for /dev/full, where every write fails ENOSPC.
    Object.assign(writer as unknown as { fd: number }, { fd: openSync('/dev/full', 'w') })
    err.write('lost\n')
    await tick()
    expect(writer).toMatchObject({ capped: true, failure: 'ENOSPC', bytes: 0 })
    expect(writer.problem()).toBe('log failed (ENOSPC)')
    writer.close()
    const other = files()
    const removed = new LogWriter(other.log, 1000, 'bash_bg')
    unlinkSync(other.log)
    expect(removed.problem()).toBe('log removed')
    removed.close()
    expect(removed.problem()).toBe('log removed')
  })
})
