/**
 * The package as a user installs it: the built entry loaded through its cordis.patch.yml row
 * (as the Loader resolves `name`), and a host process whose exit kills every shell.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type {} from '@deepseek-ai/dsh-tools'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import { bootComposition, bundlePatch, execTool, textOf, type Composition } from '@gencode-ai/testkit'
import { bootBashBg, marker, newShellCgroup, pidsWithMarker, until, type BgHost } from './harness.ts'

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name: string, exports: { '.': { default: string } }, dsh: { bundle: { patch: string } } }
const children: ChildProcess[] = []
const probe = newShellCgroup()
probe?.remove()
const cgroups = probe !== undefined
let comp: Composition | undefined
afterEach(async () => { await comp?.dispose(); comp = undefined })

beforeAll(() => {
  execFileSync(process.execPath, [join(pkgDir, '../../node_modules/typescript/bin/tsc'), '-b', pkgDir], { stdio: 'inherit' })
}, 120_000)

afterAll(() => { for (const child of children) child.kill('SIGKILL') })

describe('cordis.patch.yml row, booted by the Loader as dsh does', () => {
  it('matches package.json and the plugin name', async () => {
    const text = readFileSync(join(pkgDir, pkg.dsh.bundle.patch), 'utf8')
    const entry = await import(pathToFileURL(join(pkgDir, pkg.exports['.'].default)).href) as typeof import('../src/index.ts')
    expect(text).toContain(`- insert:\n    - id: ${entry.name}\n      name: '${pkg.name}'\n`)
    expect(Object.keys(entry).sort()).toEqual(['Config', 'apply', 'inject', 'name'])
  })

  it('enables the tool, the section and the backgroundShells service over the real host rows', async () => {
    comp = await bootComposition({ patches: [bundlePatch(pkgDir)] })
    expect(comp.entry('tool-bash-bg')?.options.name).toBe(pkg.name)
    expect(comp.ctx.get('backgroundShells')?.logDir).toMatch(/dsh-bash-bg-/)
    expect(textOf(await execTool(comp.ctx, 'bash_bg', { command: 'echo loaded' }))).toBe('loaded\n')
    expect(comp.logs.filter((log) => log.type === 'error')).toEqual([])
  })

  it('a `disabled: true` row removes it; a bad row config fails the boot naming the key', async () => {
    comp = await bootComposition({ patches: [bundlePatch(pkgDir), { yaml: '- id: tool-bash-bg\n  disabled: true\n' }] })
    expect(comp.ctx.tools.get('bash_bg')).toBeUndefined()
    expect(comp.ctx.get('backgroundShells')).toBeUndefined()
    await comp.dispose()
    comp = undefined
    const outcome = await bootComposition({ patches: [bundlePatch(pkgDir), [{ id: 'tool-bash-bg', config: { maxLogBytes: 0 } }]] })
      .then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => error)
    expect(String(outcome)).toContain('$.maxLogBytes expected number >= 1 but got 0')
  })
})

interface ChildHost {
  child: ChildProcess
  output: () => string
  ready: Promise<void>
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

function startHost(mode: string, mark: string, prefix: readonly string[] = [], env: NodeJS.ProcessEnv = {}): ChildHost {
  const argv = [...prefix, process.execPath, join(pkgDir, 'tests/fixtures/host.mjs'), mode, mark]
  const child = spawn(argv[0] ?? '', argv.slice(1), { cwd: pkgDir, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] })
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

  it('SIGTERM during a wait_for whose pattern backtracks in JavaScript: the host answers it and its shells die', async () => {
    const mark = marker('hostilewait')
    const host = startHost('hostile-wait', mark)
    await host.ready
    await until(() => pidsWithMarker(mark, true).length === 1, 'the waited shell')
    // The wait is matching the 4000-character line now; a backtracking engine would hold the thread for hours.
    await new Promise((resolve) => setTimeout(resolve, 300))
    host.child.kill('SIGTERM')
    expect(await host.exited).toEqual({ code: null, signal: 'SIGTERM' })
    expect(pidsWithMarker(mark)).toEqual([])
  })

  it('a dispose with nothing else on the event loop runs to its end: the shell is stopped before the host exits', async () => {
    const mark = marker('hostdispose')
    const host = startHost('dispose', mark)
    // An open stdin would keep the host's loop alive by itself.
    host.child.stdin?.end()
    expect(await host.exited).toEqual({ code: 0, signal: null })
    expect(host.output()).toContain('disposed')
    expect(pidsWithMarker(mark)).toEqual([])
  })

  // Where no cgroup can be had, the env -i escapee is unseen (the README says so): nothing to prove then.
  it.skipIf(!cgroups)('a title-rewriting daemon and an env -i escapee die with the host too, by exit or SIGTERM (skipped where no cgroup can be made)', async () => {
    for (const ending of ['exit', 'SIGTERM'] as const) {
      const mark = marker(`hostile${ending}`)
      const host = startHost('hostile', mark)
      await host.ready
      // The host's own command line names the mark too: count the shell's processes by their titles.
      const daemons = () => pidsWithMarker(mark).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith(`${mark} `))
      const all = () => [...pidsWithMarker(mark, true), ...daemons()]
      await until(() => all().length === 4, 'the shell processes, the daemon and the escapee')
      await until(() => !readFileSync(`/proc/${daemons()[0]}/environ`, 'latin1').includes('DSH_BG_SHELL='), 'the title to overwrite the environment')
      if (ending === 'exit') host.child.stdin?.write('exit\n')
      else host.child.kill('SIGTERM')
      await host.exited
      await until(() => all().length === 0, 'every process of the shell to die')
    }
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

describe('crash leftovers', () => {
  let local: BgHost | undefined
  // Each test's hosts share a TMPDIR of their own: a host another test file boots meanwhile must not reap (and report) these.
  let tmp = ''
  const savedTmp = process.env.TMPDIR
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'bg-crash-'))
    process.env.TMPDIR = tmp
  })
  afterEach(async () => {
    await local?.dispose()
    local = undefined
    if (savedTmp === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = savedTmp
    rmSync(tmp, { recursive: true, force: true })
  })
  const base = () => join(tmp, `dsh-bash-bg-${process.getuid?.() ?? 0}`)

  const tasks = async (h: BgHost) => {
    const agent = h.agent()
    const listed = await h.ctx.commands.execute(agent, '/tasks', [], AbortSignal.timeout(10_000))
    return listed?.result.kind === 'success' ? listed.result.text ?? '' : ''
  }
  const withTasks = () => bootBashBg({}, { before: async (h) => { await h.ctx.plugin(CommandRuntime) } })

  it('a live host\'s shells are never touched; once it is SIGKILLed, the next host stops them and says so once in /tasks', async () => {
    const mark = marker('crash')
    const other = startHost('escape', mark, [], { TMPDIR: tmp })
    await other.ready
    await until(() => pidsWithMarker(mark, true).length === 3, 'the other host\'s shell, setsid child included')
    // Two live hosts side by side: starting this one leaves the other's shell alone.
    local = await withTasks()
    expect(pidsWithMarker(mark, true)).toHaveLength(3)
    expect(await tasks(local)).toBe('No background shells are running.')
    await local.dispose()
    local = undefined
    // SIGKILL: no exit handler runs, the shell (which ignores SIGTERM) is left with nobody to stop it.
    other.child.kill('SIGKILL')
    expect(await other.exited).toEqual({ code: null, signal: 'SIGKILL' })
    expect(pidsWithMarker(mark, true)).toHaveLength(3)
    local = await withTasks()
    await until(() => pidsWithMarker(mark).length === 0, 'the leftovers to be stopped')
    expect(await tasks(local)).toBe('Stopped 1 shell left by a host that exited without cleanup.\nNo background shells are running.')
    expect(await tasks(local)).toBe('No background shells are running.')
  })

  // A container or bwrap --unshare-pid sharing TMPDIR: its pids mean nothing in this namespace's /proc.
  const unshare = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child']
  const namespaces = spawnSync(unshare[0] ?? '', [...unshare.slice(1), 'true']).status === 0
  it.skipIf(!namespaces)('a live host in another PID namespace keeps its shells and its log directory (skipped where unshare --pid is not permitted)', async () => {
    const mark = marker('pidns')
    const other = startHost('escape', mark, unshare, { TMPDIR: tmp })
    await other.ready
    await until(() => pidsWithMarker(mark, true).length === 3, 'the other namespace\'s shell')
    const logDirs = () => readdirSync(base()).filter((name) => name.startsWith('host-') && !name.includes('.'))
    const before = logDirs()
    local = await withTasks()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(pidsWithMarker(mark, true)).toHaveLength(3)
    expect(logDirs()).toEqual(expect.arrayContaining(before))
    expect(await tasks(local)).toBe('No background shells are running.')
    other.child.stdin?.write('exit\n')
    await other.exited
  })

  it.skipIf(!namespaces)('a dead host of another PID namespace is proven dead by its socket refusing: its directory is removed (skipped where unshare --pid is not permitted)', async () => {
    const mark = marker('pidnsdead')
    const other = startHost('plain', mark, unshare, { TMPDIR: tmp })
    await other.ready
    const entries = () => readdirSync(base()).filter((name) => name.startsWith('host-'))
    const theirs = entries()
    expect(theirs.filter((name) => name.endsWith('.sock'))).toHaveLength(1)
    // SIGKILL to unshare (--kill-child) ends the whole namespace: the record, its directory and the socket file stay.
    other.child.kill('SIGKILL')
    await other.exited
    await until(() => pidsWithMarker(mark).length === 0, 'the namespace to end')
    expect(entries()).toEqual(theirs)
    local = await withTasks()
    const own = basename(local.shells.logDir)
    await until(() => entries().every((name) => name.startsWith(own)), 'the dead host\'s record, directory and socket to go', 20_000, () => `left: ${entries().filter((name) => !name.startsWith(own)).join(', ')} (ours: ${own})`)
  })

  it('a host that reaps and exits at once still SIGKILLs the leftovers that ignore SIGTERM', async () => {
    const mark = marker('reapexit')
    const other = startHost('escape', mark, [], { TMPDIR: tmp })
    await other.ready
    await until(() => pidsWithMarker(mark, true).length === 3, 'the other host\'s shell')
    other.child.kill('SIGKILL')
    await other.exited
    const reaper = startHost('boot-exit', marker('reaper'), [], { TMPDIR: tmp })
    expect(await reaper.exited).toEqual({ code: 0, signal: null })
    await until(() => pidsWithMarker(mark).length === 0, 'the TERM-ignoring leftovers to be SIGKILLed', 10_000)
  })
})
