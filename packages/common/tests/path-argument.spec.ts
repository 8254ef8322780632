// The path argument's one rule, on the real host services: as written, else unescaped, else by raw bytes (local only).
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, type Host } from '@gencode-ai/testkit'
import { fsPath, nameFromBytes, placeArgument, toolNamed } from '../src/index.ts'

describe('placeArgument', () => {
  let host: Host
  const exec = { signal: new AbortController().signal }
  beforeAll(async () => {
    host = await bootHost()
    await writeFile(join(host.cwd, 'plain.txt'), 'x')
    await writeFile(join(host.cwd, 'tab\there.txt'), 'x')
    await writeFile(fsPath(join(host.cwd, nameFromBytes(Buffer.from([0xff, 0x2e, 0x74])))), 'x')
  })
  afterAll(async () => { await host.dispose() })

  const place = async (path: string, local = true) => {
    const { placement, decoded } = await placeArgument(host.ctx, exec, path, local)
    return { path: placement.target.displayPath, decoded, inside: placement.inside }
  }

  it('takes a path as written when something is there, or when it holds no escape', async () => {
    expect(await place('plain.txt')).toEqual({ path: join(host.cwd, 'plain.txt'), decoded: false, inside: true })
    expect(await place('missing.txt')).toEqual({ path: join(host.cwd, 'missing.txt'), decoded: false, inside: true })
  })

  it('decodes a name as the tools show it when that exists, and keeps the path as written when it does not', async () => {
    expect(await place('tab\\x09here.txt')).toEqual({ path: join(host.cwd, 'tab\there.txt'), decoded: true, inside: true })
    expect(await place('none\\x09here.txt')).toEqual({ path: join(host.cwd, 'none\\x09here.txt'), decoded: false, inside: true })
    // A decoded NUL names nothing on any filesystem; a decoded path through a file (ENOTDIR) is nothing there either.
    expect(await place('nul\\x00.txt')).toMatchObject({ decoded: false })
    expect(await place('plain.txt\\x2fx')).toEqual({ path: join(host.cwd, 'plain.txt\\x2fx'), decoded: false, inside: true })
  })

  it('finds a name whose bytes are not UTF-8 by its bytes, only where node:fs may stand in for the provider', async () => {
    expect(await place('\\xff.t')).toEqual({ path: join(host.cwd, '\udcff.t'), decoded: true, inside: true })
    expect(await place('\\xff.t', false)).toMatchObject({ decoded: false })
    expect(await place('\\xfe.t')).toMatchObject({ decoded: false })
  })
})

describe('toolNamed', () => {
  it('without a tool registry, names the default', () => {
    expect(toolNamed(new Context(), {}, 'list', 'list_directory')).toBe('list_directory')
  })
})
