import { openSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { BackgroundShell } from '../src/background.ts'
import { localWorld } from '../src/local-world.ts'
import { LogWriter } from '../src/log-writer.ts'

const dirs: string[] = []
afterEach(async () => { for (const dir of dirs.splice(0)) await removeTmpDir(dir) })

/** The one injected fault: the log's descriptor swapped for /dev/full, where every write fails ENOSPC. */
function failWrites(writer: LogWriter): void {
  Object.assign(writer as unknown as { fd: number }, { fd: openSync('/dev/full', 'w') })
}

describe('a log that cannot be written', () => {
  it('stops capture, says why, and the shell ends in status error (job outcome failed)', async () => {
    const dir = await makeTmpDir('bg-fail-')
    dirs.push(dir)
    const shell = new BackgroundShell({
      id: 'bg-fail01',
      command: 'sleep 0.2; echo out',
      owner: '',
      launch: { argv: ['bash', '-c', 'sleep 0.2; echo out'], cwd: dir, env: process.env },
      outputFile: join(dir, 'bg-fail01.log'),
      maxLogBytes: 1024,
      world: localWorld,
      cancelRequest: () => ({ signal: 'SIGTERM', force: true, timeoutMs: 5000 }),
      hostMark: 'DSH_BG_HOST=test',
    })
    failWrites((shell as unknown as { writer: LogWriter }).writer)
    const record = await shell.settled
    expect(record.status).toBe('error')
    expect(record.capped).toBe(true)
    expect(record.exit_code).toBe(0)
    expect(shell.outcome()).toEqual({ status: 'failed', detail: 'exit code: 0; log failed (ENOSPC) at 0 bytes' })
  })

  it('a spawn that throws synchronously leaves no log file behind', async () => {
    const dir = await makeTmpDir('bg-fail-')
    dirs.push(dir)
    const outputFile = join(dir, 'bg-fail02.log')
    expect(() => new BackgroundShell({
      id: 'bg-fail02',
      command: 'x',
      owner: '',
      launch: { argv: ['bash', '-c', 'echo \0'], cwd: dir, env: process.env },
      outputFile,
      maxLogBytes: 1024,
      world: localWorld,
      cancelRequest: () => ({ signal: 'SIGTERM', force: true, timeoutMs: 5000 }),
      hostMark: 'DSH_BG_HOST=test',
    })).toThrow(/could not start bash/)
    const { existsSync } = await import('node:fs')
    expect(existsSync(outputFile)).toBe(false)
  })
})
