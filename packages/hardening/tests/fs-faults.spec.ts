/**
 * Filesystem faults, for read_file and list_directory: permission denied (real, from a host
 * process without the DAC capabilities: as root, modes deny nothing), files deleted or truncated during a
 * read, directories deleted during a recursive listing, FIFOs and device files (must not block or
 * read forever), a 0-byte file, no trailing newline, a 50 MB single-line file. Each runs on the
 * product's dsh-fs-sandbox and on the bare dsh-fs-local.
 */
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync } from 'node:fs'
import { mkdir, open, rm, truncate, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import * as Read from '../../tool-read/src/index.ts'
import { withinMs } from '../src/budget.ts'
import { COMPOSITIONS } from '../src/fixture.ts'

const BOUND = 30_000

type Outcome = { isError: boolean, code?: string, text: string }

/**
 * Run tool calls in a real host process that file modes bind: root without CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH (setpriv, util-linux). Unlike switching to `nobody`, it still reads a
 * checkout that lives under a private (0700) directory, as CI's may.
 */
async function unprivileged(cwd: string, calls: [string, unknown][], sandbox: boolean): Promise<Outcome[]> {
  const drop = '-dac_override,-dac_read_search'
  const child = spawn('setpriv', ['--bounding-set', drop, '--inh-caps', drop, '--', process.execPath, '--import', 'tsx', join(import.meta.dirname, '../fixtures/calls.ts'), cwd, JSON.stringify(calls), sandbox ? 'sandbox' : 'local'], {
    cwd: join(import.meta.dirname, '..'),
    env: { ...process.env, HOME: cwd },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (data: Buffer) => { out += String(data) })
  const code = await withinMs(60_000, 'the unprivileged host', new Promise<number | null>((resolve) => child.once('exit', resolve)))
  expect(code, out).toBe(0)
  const parsed = JSON.parse(out) as { dacCapabilities: boolean, results: Outcome[] }
  expect(parsed.dacCapabilities).toBe(false)
  return parsed.results
}

for (const [provider, composition] of COMPOSITIONS) {
  describe(`permission denied (a real host process that file modes bind) (${provider})`, () => {
    it('unreadable file, file in an untraversable directory, unlistable directory, unreadable child in a recursive listing', async () => {
      const root = await makeTmpDir('hardening-perm-')
      try {
        await mkdir(join(root, 'secret'))
        await mkdir(join(root, 'open'))
        await writeFile(join(root, 'locked.txt'), 'no\n')
        await writeFile(join(root, 'secret/a.txt'), 'no\n')
        await writeFile(join(root, 'open/b.txt'), 'yes\n')
        chmodSync(join(root, 'locked.txt'), 0o000)
        chmodSync(join(root, 'secret'), 0o000) // owner (root) included: without DAC capabilities modes bind the owner too
        chmodSync(root, 0o755)
        const [locked, inSecret, listSecret, recursive, readable] = await unprivileged(root, [
          ['read_file', { file_path: 'locked.txt' }],
          ['read_file', { file_path: 'secret/a.txt' }],
          ['list_directory', { path: 'secret' }],
          ['list_directory', { path: '.', recursive: true }],
          ['read_file', { file_path: 'open/b.txt' }],
        ], 'sandbox' in composition)
        expect(locked).toEqual({ isError: true, code: 'FS_PERMISSION_DENIED', text: `Error: cannot read "${root}/locked.txt": permission denied` })
        expect(inSecret).toEqual({ isError: true, code: 'FS_PERMISSION_DENIED', text: 'Error: cannot read "secret/a.txt": permission denied' })
        expect(listSecret).toMatchObject({ isError: true, code: 'FS_PERMISSION_DENIED' })
        expect(listSecret?.text.startsWith(`Error: cannot list "${root}/secret": permission denied`), listSecret?.text).toBe(true)
        expect(recursive?.isError).toBe(false)
        expect(recursive?.text).toContain('secret/ [unreadable: permission denied]')
        expect(recursive?.text).toContain('b.txt')
        expect(readable).toEqual({ isError: false, text: '1\tyes' })
      } finally {
        chmodSync(root, 0o700)
        await removeTmpDir(root)
      }
    })
  })
}

for (const [provider, composition] of COMPOSITIONS) {
  describe(`special and edge files (${provider})`, () => {
    let host: Host
    beforeAll(async () => {
      host = await bootHost(composition)
      await host.ctx.plugin(Read, { outsideWorkspace: 'allow' })
      await host.ctx.plugin(ListDir, {})
      execFileSync('mkfifo', [join(host.cwd, 'pipe')])
      // A real character device inside the workspace (we run as root): /dev/zero's numbers.
      execFileSync('mknod', [join(host.cwd, 'zero'), 'c', '1', '5'])
      await writeFile(join(host.cwd, 'empty.txt'), '')
      await writeFile(join(host.cwd, 'no-newline.txt'), 'first\nlast')
      await writeFile(join(host.cwd, 'one-line.txt'), 'y'.repeat(50 * 1024 * 1024))
    })
    afterAll(async () => { await host.dispose() })

    const read = (args: object) => withinMs(BOUND, `read_file ${JSON.stringify(args)}`, execTool(host.ctx, 'read_file', args))

    it('a FIFO with no writer: a clear error at once, never a blocked open', async () => {
      const result = await read({ file_path: 'pipe' })
      expect(textOf(result)).toBe(`Error: cannot read "${host.cwd}/pipe": not a regular file (a device, socket or pipe)`)
    })

    it('device files (/dev/zero, /dev/null, and a device node in the workspace): a clear error, never read forever', async () => {
      for (const path of ['/dev/zero', '/dev/null', '/dev/urandom', join(host.cwd, 'zero')]) {
        expect(textOf(await read({ file_path: path }))).toBe(`Error: cannot read "${path}": not a regular file (a device, socket or pipe)`)
      }
    })

    it('list_directory shows the FIFO and the device without opening them', async () => {
      const result = await withinMs(BOUND, 'list_directory', execTool(host.ctx, 'list_directory', { path: '.', long: true }))
      expect(result.isError, textOf(result)).toBe(false)
      expect(textOf(result)).toContain('pipe')
      expect(textOf(result)).toContain('zero')
    })

    it('a 0-byte file and a file with no trailing newline', async () => {
      expect(textOf(await read({ file_path: 'empty.txt' }))).toBe('(File is empty.)')
      expect(textOf(await read({ file_path: 'no-newline.txt' }))).toBe('1\tfirst\n2\tlast')
    })

    it('a 50 MB single-line file: one line, cut at maxLineLength, bounded result', async () => {
      const result = await read({ file_path: 'one-line.txt' })
      expect(result.isError, textOf(result).slice(0, 200)).toBe(false)
      const text = textOf(result)
      expect(text.startsWith(`1\t${'y'.repeat(2000)}`)).toBe(true)
      expect(text.length).toBeLessThan(2200)
      expect(text.split('\n')).toHaveLength(1)
    })
  })
}

for (const [provider, composition] of COMPOSITIONS) {
  describe(`files changing under a read (${provider})`, () => {
    let host: Host
    beforeAll(async () => {
      host = await bootHost(composition)
      await host.ctx.plugin(Read, {})
    })
    afterAll(async () => { await host.dispose() })

    const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n'

    /** Run `fault` on the file right after the tool's stat of it (the provider's answer stands). */
    function afterStat(name: string, fault: (path: string) => Promise<void>): () => void {
      const fs = host.ctx.fs
      const original = fs.stat.bind(fs)
      fs.stat = async (target: FsTarget, signal?: AbortSignal) => {
        const info = await original(target, signal)
        if (target.displayPath.endsWith(`/${name}`)) await fault(target.displayPath)
        return info
      }
      return () => { fs.stat = original }
    }

    it('deleted between the stat and the read: a clear error naming the file', async () => {
      await writeFile(join(host.cwd, 'gone.txt'), lines(100))
      const restore = afterStat('gone.txt', (path) => unlink(path))
      try {
        const result = await withinMs(BOUND, 'read', execTool(host.ctx, 'read_file', { file_path: 'gone.txt' }))
        expect(textOf(result)).toBe(`Error: cannot read "${host.cwd}/gone.txt": it vanished while being read`)
        expect(result.isError && result.error.info?.code).toBe('FS_NOT_FOUND')
      } finally {
        restore()
      }
    })

    it('truncated between the stat and the read: what is there now, with an honest count', async () => {
      await writeFile(join(host.cwd, 'shrunk.txt'), lines(1000))
      const restore = afterStat('shrunk.txt', (path) => truncate(path, 'line 1\nline 2\n'.length))
      try {
        const result = await withinMs(BOUND, 'read', execTool(host.ctx, 'read_file', { file_path: 'shrunk.txt' }))
        expect(textOf(result)).toBe('1\tline 1\n2\tline 2')
        const past = await withinMs(BOUND, 'read', execTool(host.ctx, 'read_file', { file_path: 'shrunk.txt', offset: 500 }))
        expect(textOf(past)).toBe('(Offset 500 is past the end: the file has 2 lines. Use offset=2 to read its last line.)')
      } finally {
        restore()
      }
    })

    it('truncated or deleted while a large file streams (racing the local fast path): a value or a clear error, never a hang', async () => {
      const path = join(host.cwd, 'big.txt')
      const outcomes: string[] = []
      for (let round = 0; round < 6; round++) {
        const handle = await open(path, 'w')
        for (let i = 0; i < 40; i++) await handle.write(lines(40_000))
        await handle.close()
        const reading = withinMs(BOUND, 'read', execTool(host.ctx, 'read_file', { file_path: 'big.txt', offset: 1_500_000 }))
        await new Promise((resolve) => setTimeout(resolve, round * 5))
        await (round % 2 === 0 ? truncate(path, 1000) : rm(path))
        const result = await reading
        const text = textOf(result)
        if (result.isError) expect(text, text).toMatch(/^Error: cannot read "[^"]*big\.txt": /)
        else expect(text).toMatch(/^(\d+\t|\(Offset 1500000 is past the end)/)
        outcomes.push(result.isError ? 'error' : text.startsWith('(Offset') ? 'past the end' : `lines (${text.match(/of (\d+)/)?.[1] ?? 'last window'})`)
      }
      console.log(`read under truncation/deletion: ${outcomes.join(', ')}`)
    })
  })
}

describe('a file truncated mid-stream on the provider path (a wrapped streamText is not a local read)', () => {
  it('the read ends where the file now ends: a value, no hang, no invented lines', async () => {
    const host = await bootHost({ sandbox: 'workspace-write' })
    try {
      await host.ctx.plugin(Read, {})
      const path = join(host.cwd, 'stream.txt')
      await writeFile(path, Array.from({ length: 200_000 }, (_, i) => `line ${i + 1}`).join('\n') + '\n')
      const fs = host.ctx.fs
      const original = fs.streamText.bind(fs)
      let chunks = 0
      // After a stream's first chunk has been consumed, cut the file to two lines: the rest of that
      // stream sees EOF. (read_file first peeks at the start of a stream to pick its reader; a
      // stream abandoned after one chunk never resumes, so the truncation hits the scanning one.)
      fs.streamText = async (target, signal) => {
        const stream = await original(target, signal)
        return (async function* () {
          let own = 0
          for await (const chunk of stream) {
            chunks++
            own++
            yield chunk
            if (own === 1) await truncate(path, 'line 1\nline 2\n'.length)
          }
        })()
      }
      const result = await withinMs(BOUND, 'read', execTool(host.ctx, 'read_file', { file_path: 'stream.txt', offset: 199_990 }))
      expect(result.isError, textOf(result)).toBe(false)
      const text = textOf(result)
      // Whatever the stream delivered before EOF is all there is: no window past it, and the count is what was seen.
      const seen = Number(text.match(/the file has (\d+) lines/)?.[1])
      expect(text).toMatch(/^\(Offset 199990 is past the end: the file has \d+ lines\. Use offset=\d+ to read its last line\.\)$/)
      expect(seen).toBeLessThan(199_990)
      console.log(`provider stream truncated after ${chunks} chunk(s): ${text}`)
    } finally {
      await host.dispose()
    }
  })
})

for (const [provider, composition] of COMPOSITIONS) {
  describe(`directories deleted during a recursive listing (${provider})`, () => {
    it('racing rm -rf of subtrees: every listing is a value or a clear error, never a throw or a hang', async () => {
      const host = await bootHost(composition)
      try {
        await host.ctx.plugin(ListDir, { maxEntries: 1000 })
        const outcomes = { values: 0, errors: 0, vanished: 0, totals: [] as number[] }
        for (let round = 0; round < 6; round++) {
          for (let d = 0; d < 40; d++) {
            await mkdir(join(host.cwd, `d${d}/sub/deeper`), { recursive: true })
            for (let f = 0; f < 10; f++) await writeFile(join(host.cwd, `d${d}/sub/deeper/f${f}`), '')
          }
          const listing = withinMs(BOUND, 'list_directory', execTool(host.ctx, 'list_directory', { path: '.', recursive: true, depth: 5 }))
          await Promise.all(Array.from({ length: 40 }, (_, d) => rm(join(host.cwd, `d${d}`), { recursive: true, force: true })))
          const result = await listing
          const text = textOf(result)
          if (result.isError) {
            outcomes.errors++
            expect(text).toMatch(/^Error: cannot list /)
          } else {
            outcomes.values++
            expect(text).toMatch(/Total: /)
            if (/vanished|unreadable/.test(text)) outcomes.vanished++
            outcomes.totals.push(Number(text.match(/Total: (\d+)/)?.[1]))
          }
        }
        console.log(`listing under deletion: ${outcomes.values} values (${outcomes.vanished} reporting a vanished directory; totals ${outcomes.totals.join(', ')}), ${outcomes.errors} clear errors`)
      } finally {
        await host.dispose()
      }
    })
  })
}
