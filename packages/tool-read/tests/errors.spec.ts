import { mkdir, symlink, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

async function failure(args: Record<string, unknown>, on: Host = host) {
  const result = await execTool(on.ctx, 'read_file', args)
  expect(result.isError).toBe(true)
  return { text: textOf(result), code: result.isError ? result.error.info?.code : undefined }
}

describe('errors', () => {
  it('a missing file suggests up to three near names from the same directory', async () => {
    await mkdir(join(host.cwd, 'src'))
    for (const name of ['config.ts', 'config.js', 'Config.tsx', 'confit.ts', 'unrelated.md']) {
      await writeFile(join(host.cwd, 'src', name), 'x\n')
    }
    const path = join(host.cwd, 'src', 'config.txt')
    expect(await failure({ file_path: 'src/config.txt' })).toEqual({
      text: `Error: cannot read "${path}": file not found. Did you mean: config.js, config.ts, Config.tsx?`,
      code: 'FS_NOT_FOUND',
    })
  })

  it('a missing file with no near names points to list_directory', async () => {
    const path = join(host.cwd, 'src', 'zzzzzzzz.py')
    expect((await failure({ file_path: 'src/zzzzzzzz.py' })).text).toBe(
      `Error: cannot read "${path}": file not found — use list_directory to see what is in "${join(host.cwd, 'src')}"`,
    )
  })

  it('a missing directory says so', async () => {
    const path = join(host.cwd, 'nope', 'a.txt')
    expect((await failure({ file_path: 'nope/a.txt' })).text).toBe(
      `Error: cannot read "${path}": file not found (the directory "${join(host.cwd, 'nope')}" does not exist)`,
    )
  })

  it('a directory points to list_directory', async () => {
    expect(await failure({ file_path: 'src' })).toEqual({
      text: `Error: cannot read "${join(host.cwd, 'src')}": it is a directory — use list_directory to see what is in it`,
      code: 'FS_NOT_REGULAR_FILE',
    })
  })

  const binary = (name: string) => `Error: cannot read "${join(host.cwd, name)}": binary file (NUL bytes, or text in no encoding read_file recognises — pass encoding if you know it); read_file reads text, PDFs, png/jpg/gif/webp/bmp images and .ipynb notebooks`

  it('binary by content (a NUL), whatever the extension', async () => {
    await writeFile(join(host.cwd, 'data.txt'), Buffer.from([0x61, 0x00, 0x62, 0x0a]))
    expect(await failure({ file_path: 'data.txt' })).toEqual({ text: binary('data.txt'), code: 'FS_NOT_TEXT' })
  })

  it('binary by content: NULs in text that is not UTF-8', async () => {
    await writeFile(join(host.cwd, 'mixed.txt'), Buffer.concat([Buffer.from('caf\xe9\n', 'latin1'), Buffer.alloc(20), Buffer.from('x\n')]))
    expect((await failure({ file_path: 'mixed.txt' })).text).toBe(binary('mixed.txt'))
  })

  it('an empty file_path, and offset / limit that are not positive', async () => {
    await writeFile(join(host.cwd, 'ok.txt'), 'a\n')
    expect(await failure({ file_path: '  ' })).toEqual({ text: 'Error: file_path must not be empty; pass the path of a file', code: 'INVALID_ARGS' })
    expect((await failure({ file_path: 'ok.txt', offset: 0 })).text).toBe('Error: offset must be a positive integer (got 0); lines and cells are numbered from 1')
    expect((await failure({ file_path: 'ok.txt', limit: -5 })).text).toBe('Error: limit must be a positive integer (got -5); lines and cells are numbered from 1')
    // The schema itself rejects a fraction and a missing path (the host's own message).
    expect((await failure({ file_path: 'ok.txt', offset: 1.5 })).code).toBe('INVALID_ARGS')
    expect((await failure({})).code).toBe('INVALID_ARGS')
  })

  // Found by packages/hardening (fuzz-read, fs-faults): raw OS errors named no argument.
  it('a NUL in file_path is refused naming the argument (node would say \'path\' without it)', async () => {
    expect(await failure({ file_path: 'a\0b' })).toEqual({
      text: 'Error: file_path must not contain a NUL character (got "a\\u0000b"); pass the path of a file',
      code: 'INVALID_ARGS',
    })
  })

  it('a name too long and a symlink loop name the file, not the syscall', async () => {
    const long = 'x'.repeat(300)
    expect(await failure({ file_path: long })).toEqual({ text: `Error: cannot read "${'x'.repeat(120)}…" (300 characters): a name in the path is too long`, code: 'FS_IO_ERROR' })
    await symlink('loop-self', join(host.cwd, 'loop-self'))
    expect((await failure({ file_path: 'loop-self' })).text).toBe('Error: cannot read "loop-self": the path loops through symlinks')
  })

  it('a file deleted between the stat and the read names the file (not a raw ENOENT from open)', async () => {
    await writeFile(join(host.cwd, 'gone.txt'), 'a\n')
    const fs = host.ctx.fs
    const stat = fs.stat.bind(fs)
    fs.stat = async (target, signal) => {
      const info = await stat(target, signal)
      if (target.displayPath.endsWith('/gone.txt')) await unlink(target.displayPath)
      return info
    }
    try {
      expect(await failure({ file_path: 'gone.txt' })).toEqual({ text: `Error: cannot read "${join(host.cwd, 'gone.txt')}": it vanished while being read`, code: 'FS_NOT_FOUND' })
    } finally {
      fs.stat = stat
    }
  })

  it('a dangling symlink says so instead of suggesting its own name', async () => {
    await mkdir(join(host.cwd, 'links'))
    await symlink('missing-target', join(host.cwd, 'links', 'dangling'))
    expect((await failure({ file_path: 'links/dangling' })).text).toBe(
      `Error: cannot read "${join(host.cwd, 'links', 'dangling')}": file not found (dangling is a symbolic link whose target does not exist)`,
    )
  })

  it('beside a symlink loop (which fails the provider\'s listing) a missing file gets no suggestions', async () => {
    // host.cwd holds loop-self (the test above) and ok.txt.
    expect((await failure({ file_path: 'ok.tx' })).text).toBe(`Error: cannot read "${join(host.cwd, 'ok.tx')}": file not found`)
  })

  it('a notebook over maxFileBytes is refused', async () => {
    const small = await readHost({ maxFileBytes: 10 })
    try {
      await writeFile(join(small.cwd, 'n.ipynb'), '{"cells": []}')
      expect((await failure({ file_path: 'n.ipynb' }, small))).toEqual({
        text: `Error: cannot read "${join(small.cwd, 'n.ipynb')}": 13 bytes exceeds maxFileBytes (10) for a file read whole — read a smaller file, or raise maxFileBytes in tool-read's config`,
        code: 'FS_TOO_LARGE',
      })
    } finally {
      await small.dispose()
    }
  })
})
