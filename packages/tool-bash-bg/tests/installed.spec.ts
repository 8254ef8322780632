/**
 * The package as a user installs it: the built entry loaded through its cordis.patch.yml row
 * (as the Loader resolves `name`), and a host process whose exit kills every shell.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, symlinkSync, mkdirSync, existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost } from '@gencode-ai/testkit'
import { marker, pidsWithMarker, until } from './harness.ts'

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name: string, exports: { '.': { default: string } }, dsh: { bundle: { patch: string } } }
const children: ChildProcess[] = []

/** The one row of cordis.patch.yml: `- insert:` then `- id: …` and `name: '…'` (plus optional config). */
function patchRow(): { id: string, name: string } {
  const text = readFileSync(join(pkgDir, pkg.dsh.bundle.patch), 'utf8')
  const id = /^\s+- id: (\S+)$/m.exec(text)?.[1]
  const name = /^\s+name: '([^']+)'$/m.exec(text)?.[1]
  expect(/^- insert:$/m.test(text)).toBe(true)
  if (id === undefined || name === undefined) throw new Error('cordis.patch.yml has no id/name row')
  return { id, name }
}

beforeAll(() => {
  execFileSync(process.execPath, [join(pkgDir, '../../node_modules/typescript/bin/tsc'), '-b', pkgDir], { stdio: 'inherit' })
  // The host resolves the row's npm name from node_modules, as an installed plugin is.
  const scope = join(pkgDir, '../../node_modules/@gencode-ai')
  mkdirSync(scope, { recursive: true })
  if (!existsSync(join(scope, 'dsh-tool-bash-bg'))) symlinkSync(pkgDir, join(scope, 'dsh-tool-bash-bg'))
}, 120_000)

afterAll(() => { for (const child of children) child.kill('SIGKILL') })

describe('cordis.patch.yml row', () => {
  it('matches package.json and the plugin name, and boots through the built entry', async () => {
    const row = patchRow()
    const entry = await import(pathToFileURL(join(pkgDir, pkg.exports['.'].default)).href) as typeof import('../src/index.ts')
    expect(row).toEqual({ id: entry.name, name: pkg.name })
    expect(Object.keys(entry).sort()).toEqual(['Config', 'apply', 'inject', 'name'])
    const host = await bootHost()
    try {
      await host.ctx.plugin(entry, {})
      expect(host.ctx.tools.get('bash_bg')).toBeDefined()
      expect(host.ctx.get('backgroundShells')).toBeDefined()
    } finally {
      await host.dispose()
    }
  })
})

function startHost(mode: string, mark: string): { child: ChildProcess, output: () => string, ready: Promise<void>, exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [join(pkgDir, 'tests/fixtures/host.mjs'), mode, mark], { cwd: pkgDir, stdio: ['pipe', 'pipe', 'inherit'] })
  children.push(child)
  let out = ''
  const ready = new Promise<void>((resolve) => child.stdout?.on('data', (data: Buffer) => { out += String(data); if (out.includes('ready ')) resolve() }))
  const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return { child, output: () => out, ready, exited }
}

describe('host process exit', () => {
  it('a normal exit kills every shell of the group', async () => {
    const mark = marker('hostexit')
    const host = startHost('exit', mark)
    await host.ready
    await until(() => pidsWithMarker(mark, true).length === 2, 'the shell processes')
    expect(await host.exited).toEqual({ code: 0, signal: null })
    await until(() => pidsWithMarker(mark).length === 0, 'the shells to die')
  })

  it('SIGTERM with no other listener: shells die and the host still ends by SIGTERM', async () => {
    const mark = marker('hostterm')
    const host = startHost('plain', mark)
    await host.ready
    await until(() => pidsWithMarker(mark, true).length === 2, 'the shell processes')
    host.child.kill('SIGTERM')
    expect(await host.exited).toEqual({ code: null, signal: 'SIGTERM' })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('SIGINT the host handles itself is not hijacked: shells live on until the host exits', async () => {
    const mark = marker('hostint')
    const host = startHost('host-sigint', mark)
    await host.ready
    await until(() => pidsWithMarker(mark, true).length === 2, 'the shell processes')
    host.child.kill('SIGINT')
    await until(() => host.output().includes('host handled SIGINT'), 'the host handler')
    expect(pidsWithMarker(mark, true)).toHaveLength(2)
    host.child.stdin?.write('exit\n')
    expect(await host.exited).toEqual({ code: 0, signal: null })
    expect(pidsWithMarker(mark)).toEqual([])
  })
})
