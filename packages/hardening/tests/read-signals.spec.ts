/**
 * The host's SIGTERM during a long read_file call: a real host process (stopping as the dsh CLI does) reads a 100 GiB
 * sparse file past its end — minutes of scanning — and must exit at once when signalled. Both compositions.
 */
import { spawn } from 'node:child_process'
import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { withinMs } from '../src/budget.ts'
import { COMPOSITIONS } from '../src/fixture.ts'

for (const [provider, composition] of COMPOSITIONS) {
  describe(`SIGTERM during a read (${provider})`, () => {
    it('a host scanning a 100 GiB sparse file exits promptly on SIGTERM', async () => {
      const dir = await makeTmpDir('read-signal-')
      const path = join(dir, 'sparse.txt')
      await writeFile(path, 'text at the start\n'.repeat(1000))
      const handle = await open(path, 'r+')
      await handle.truncate(100 * 1024 ** 3)
      await handle.close()
      const child = spawn(process.execPath, [
        '--import', 'tsx', join(import.meta.dirname, '../fixtures/read-host.ts'), dir, 'sandbox' in composition ? 'sandbox' : 'local', 'sparse.txt', '1000000000',
      ], { cwd: join(import.meta.dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] })
      try {
        let out = ''
        child.stdout.on('data', (data: Buffer) => { out += String(data) })
        await withinMs(60_000, 'the child host to start reading', new Promise<void>((resolve, reject) => {
          child.stdout.on('data', () => { if (out.includes('reading')) resolve() })
          child.once('exit', (code) => reject(new Error(`child host exited early (${code}): ${out}`)))
        }))
        await new Promise((resolve) => setTimeout(resolve, 1000))
        // The read is still running (the precondition: a signal during a read, not after it).
        expect(out).not.toContain('done')
        const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
        const sent = performance.now()
        child.kill('SIGTERM')
        // A hang bound: the handler runs between two 1 MiB reads, so it exits well within it.
        expect(await withinMs(10_000, 'the host to exit on SIGTERM', exited)).toEqual({ code: 0, signal: null })
        console.log(`${provider}: exited ${Math.round(performance.now() - sent)} ms after SIGTERM, mid-read`)
        expect(out).not.toContain('done')
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        await removeTmpDir(dir)
      }
    })
  })
}
