/**
 * One opened file, one answer: a swap after the check (the provider's stat) is refused or read from what was opened,
 * never from what the swap put there; a file growing while it is read is read to its size when opened, and says so.
 * On the product's dsh-fs-sandbox and the bare dsh-fs-local.
 */
import { execFileSync, spawn } from 'node:child_process'
import { link, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

const SECRET = 'OUTSIDE-SECRET'

for (const [provider, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' as const }], ['dsh-fs-local', {}]] as const) {
  describe(`one descriptor per read (${provider})`, () => {
    let host: Host
    let outside: string
    beforeAll(async () => {
      host = await readHost({}, options)
      outside = await makeTmpDir('outside-')
      await mkdir(join(outside, 'd'))
      await writeFile(join(outside, 'secret.txt'), `${SECRET}\n`)
      await writeFile(join(outside, 'd/f.txt'), `${SECRET}\n`)
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(outside)
    })

    /** Run `fault` right after the body's stat of a path ending in `name` (after the outside-workspace check). */
    function afterStat(name: string, fault: () => Promise<void>): () => void {
      const fs = host.ctx.fs
      const original = fs.stat.bind(fs)
      let done = false
      fs.stat = async (target: FsTarget, signal?: AbortSignal) => {
        const info = await original(target, signal)
        if (!done && target.displayPath.endsWith(name)) {
          done = true
          await fault()
        }
        return info
      }
      return () => { fs.stat = original }
    }

    const read = (args: object) => execTool(host.ctx, 'read_file', args)

    it('the file swapped for a symlink to an outside file after the check: "changed", not the outside bytes', async () => {
      await writeFile(join(host.cwd, 'a.txt'), 'inside\n')
      const restore = afterStat('/a.txt', async () => {
        await rm(join(host.cwd, 'a.txt'))
        await symlink(join(outside, 'secret.txt'), join(host.cwd, 'a.txt'))
      })
      try {
        const result = await read({ file_path: 'a.txt' })
        expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'a.txt')}": it changed while it was being read (moved, or swapped for a link) — read it again`)
        expect(result.isError && result.error.info?.code).toBe('FS_STALE_VERSION')
      } finally {
        restore()
      }
    })

    it('a parent directory swapped for a symlink to an outside directory after the check: "changed"', async () => {
      await mkdir(join(host.cwd, 'p'))
      await writeFile(join(host.cwd, 'p/f.txt'), 'inside\n')
      const restore = afterStat('/p/f.txt', async () => {
        await rename(join(host.cwd, 'p'), join(host.cwd, 'p-old'))
        await symlink(join(outside, 'd'), join(host.cwd, 'p'))
      })
      try {
        const text = textOf(await read({ file_path: 'p/f.txt' }))
        expect(text).toContain('it changed while it was being read')
        expect(text).not.toContain(SECRET)
      } finally {
        restore()
      }
    })

    it('the file swapped for a FIFO after the check: a clear error at once, never a blocked open', async () => {
      await writeFile(join(host.cwd, 'q.txt'), 'inside\n')
      const restore = afterStat('/q.txt', async () => {
        await rm(join(host.cwd, 'q.txt'))
        execFileSync('mkfifo', [join(host.cwd, 'q.txt')])
      })
      try {
        expect(textOf(await read({ file_path: 'q.txt' }))).toBe(`Error: cannot read "${join(host.cwd, 'q.txt')}": not a regular file (a device, socket or pipe)`)
      } finally {
        restore()
      }
    })

    it('a file replaced at the checked path after the check (an atomic save): what is there when opened is read', async () => {
      await writeFile(join(host.cwd, 'm.txt'), 'moved\n')
      const restore = afterStat('/m.txt', async () => {
        await rename(join(host.cwd, 'm.txt'), join(host.cwd, 'm2.txt'))
        await writeFile(join(host.cwd, 'm.txt'), 'replacement\n')
      })
      try {
        // The replacement is at the checked path when opened: it is what is read.
        expect(textOf(await read({ file_path: 'm.txt' }))).toBe('1\treplacement')
      } finally {
        restore()
      }
    })

    it('a file growing at about 100 MB/s while it is read: the read returns, to its size when opened, and says it grew', async () => {
      const path = join(host.cwd, 'growing.log')
      await writeFile(path, 'line\n'.repeat(10_000_000))
      // A writer appending about 100 MB/s (1 MiB every 10 ms) for the whole test.
      const append = `const fs = require('fs'); const fd = fs.openSync(process.argv[1], 'a'); const b = Buffer.alloc(1 << 20, 'more\\n');
        setInterval(() => fs.writeSync(fd, b), 10)`
      const writer = spawn(process.execPath, ['-e', append, path], { stdio: 'ignore' })
      try {
        // Reads until one overlaps a write (a loaded machine may starve the writer for one read); each must return.
        let grew: { from: number, to: number } | undefined
        for (let attempt = 0; attempt < 10 && grew === undefined; attempt++) {
          // Past the end: a scan to the end of a moving file would never return.
          const result = await read({ file_path: 'growing.log', offset: 1_000_000_000 })
          const text = textOf(result)
          expect(result.isError, text).toBe(false)
          const value = result.value as { grew?: { from: number, to: number }, total_lines: number }
          grew = value.grew
          if (grew === undefined) continue
          expect(text).toBe(`(Offset 1000000000 is past the end: the file has ${value.total_lines} lines. Use offset=${value.total_lines} to read its last line.)`
            + `\n\n(The file grew from ${grew.from} to ${grew.to} bytes while it was read: this read, counts included, covers its first ${grew.from} bytes.)`)
          expect(grew.to).toBeGreaterThan(grew.from)
          // The count is of the file at its size when opened (5-byte lines; a write caught midway ends in a part line).
          expect(value.total_lines).toBeGreaterThanOrEqual(10_000_000)
          expect(value.total_lines).toBe(Math.ceil(grew.from / 5))
        }
        expect(grew).toBeDefined()
      } finally {
        writer.kill('SIGKILL')
        await new Promise((resolve) => writer.once('exit', resolve))
        await rm(path)
      }
    })

    it('hard links are trusted: a link inside the workspace to a file outside it reads that file (README says why)', async () => {
      // Same filesystem (both under the OS temp dir), so the link can be made.
      await link(join(outside, 'secret.txt'), join(host.cwd, 'hard.txt'))
      expect(textOf(await read({ file_path: 'hard.txt' }))).toBe(`1\t${SECRET}`)
    })

    it('a file that did not grow says nothing of it', async () => {
      await writeFile(join(host.cwd, 'still.txt'), 'a\nb\n')
      const result = await read({ file_path: 'still.txt' })
      expect(textOf(result)).toBe('1\ta\n2\tb')
      expect(result.isError ? undefined : (result.value as { grew?: unknown }).grew).toBeUndefined()
    })
  })
}
