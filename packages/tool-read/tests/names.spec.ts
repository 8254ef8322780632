/**
 * Names as the model sees and passes them back: echoed paths escaped and cut with their length stated; an escaped path
 * that does not exist as written is decoded and read, also when its bytes are not UTF-8. Both compositions.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

/** A path under `dir` whose last name is raw bytes (latin-1 "café.txt": 0xE9 is not UTF-8 alone). */
const rawName = (dir: string, bytes: number[]): Buffer => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(bytes)])
const CAFE = [0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]

for (const [provider, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' as const }], ['dsh-fs-local', {}]] as const) {
  describe(`names (${provider})`, () => {
    let host: Host
    beforeAll(async () => {
      host = await readHost({}, options)
      await writeFile(rawName(host.cwd, CAFE), 'latin name\n')
      await mkdir(rawName(host.cwd, [0x64, 0xff]))
      await writeFile(Buffer.concat([rawName(host.cwd, [0x64, 0xff]), Buffer.from('/in.txt')]), 'in a raw dir\n')
      await writeFile(join(host.cwd, 'new\nline.txt'), 'newline name\n')
      await writeFile(join(host.cwd, 'back\\slash.txt'), 'backslash name\n')
    })
    afterAll(async () => { await host.dispose() })

    const read = (args: object) => execTool(host.ctx, 'read_file', args)

    it('a file whose name is not UTF-8, passed back escaped: read (not "a symbolic link whose target does not exist")', async () => {
      const result = await read({ file_path: 'caf\\xe9.txt' })
      expect(textOf(result)).toBe('1\tlatin name')
      expect(result.isError ? undefined : (result.value as { path: string }).path).toBe(`${host.cwd}/caf\udce9.txt`)
      expect(textOf(await read({ file_path: join(host.cwd, 'd\\xff/in.txt') }))).toBe('1\tin a raw dir')
    })

    it('the name as U+FFFD (a lossy decoding): not found, suggesting the escaped name that reads it', async () => {
      expect(textOf(await read({ file_path: 'caf\ufffd.txt' }))).toBe(`Error: cannot read "${host.cwd}/caf\ufffd.txt": file not found. Did you mean: caf\\xe9.txt?`)
    })

    it('control characters in a name: escaped when echoed, decoded when passed back', async () => {
      const missing = await read({ file_path: 'new\nline.tx' })
      expect(textOf(missing)).toBe(`Error: cannot read "${host.cwd}/new\\x0aline.tx": file not found. Did you mean: new\\x0aline.txt?`)
      expect(textOf(await read({ file_path: 'new\\x0aline.txt' }))).toBe('1\tnewline name')
      // A name with no other escape keeps its backslash as it is.
      expect(textOf(await read({ file_path: 'back\\slash.txt' }))).toBe('1\tbackslash name')
      const ansi = await read({ file_path: 'dir\u001b[2J\u202e/x.txt' })
      expect(textOf(ansi)).toContain('dir\\x1b[2J\\u{202e}/x.txt')
      expect(textOf(ansi).includes('\u001b') || textOf(ansi).includes('\u202e')).toBe(false)
    })

    it('a reader\'s error names the file escaped too (a binary file, a directory)', async () => {
      await writeFile(join(host.cwd, 'bin\u001b[2J.dat'), Buffer.from([0, 1, 2, 0, 0xff]))
      const binary = textOf(await read({ file_path: 'bin\u001b[2J.dat' }))
      expect(binary).toMatch(new RegExp(`^Error: cannot read "${host.cwd}/bin\\\\x1b\\[2J\\.dat": binary file`))
      await mkdir(join(host.cwd, 'dir\u2028x'))
      expect(textOf(await read({ file_path: 'dir\u2028x' }))).toBe(`Error: cannot read "${host.cwd}/dir\\u{2028}x": it is a directory — use list_directory to see what is in it`)
    })

    it('a 60,000-character file_path is echoed cut, with its length stated', async () => {
      const text = textOf(await read({ file_path: 'y'.repeat(60_000) }))
      expect(text).toBe(`Error: cannot read "${'y'.repeat(120)}…" (60000 characters): a name in the path is too long`)
      const deep = textOf(await read({ file_path: `${'abcdefgh/'.repeat(400)}x.txt` }))
      expect(deep.length, deep).toBeLessThan(400)
      expect(deep).toMatch(/…" \(\d+ characters\)/)
    })

    it('an escaped path that decodes to a file outside the workspace is refused', async () => {
      const outside = await makeTmpDir('outside-')
      try {
        await writeFile(rawName(outside, CAFE), 'secret\n')
        await symlink(outside, join(host.cwd, 'out-link'))
        const text = textOf(await read({ file_path: 'out-link/caf\\xe9.txt' }))
        expect(text).toContain('is outside the workspace')
        expect(text).not.toContain('secret')
      } finally {
        await removeTmpDir(outside)
      }
    })
  })
}
