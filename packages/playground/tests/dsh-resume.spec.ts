// Background shells across runs of the real dsh CLI (issue 29, "Done when"): run 1 is the stock headless runner;
// later runs resume run 1's session through ctx.agents.resume with a test-only runner a patch installs (rc.8's
// headless CLI cannot resume). The model is scripted; the first request of each resumed run is the witness.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { ensureDshCli, ensureProfilePlugins, packPlugins, spawnDsh, type DshInstall } from '../src/dsh-cli.ts'
import { collect } from './cli-run.ts'
import { startScriptedModel, type ChatRequest, type Reply, type SeenResult } from './model-server.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const fixtures = fileURLToPath(new URL('fixtures/', import.meta.url))
const PROFILE = 'headless'
const SHELL_ID = /\bbg-[a-z0-9]{6}\b/


/** Wait until `check` holds, polling (the bound only stops a hung test). */
async function until(check: () => boolean, what: string, boundMs = 60_000): Promise<void> {
  const deadline = Date.now() + boundMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Live pids whose argv[0] is `name` (a shell's marked process), by /proc. */
function pidsNamed(name: string): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.[0]
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === name && state !== 'Z'
    } catch {
      return false
    }
  }).map(Number)
}

/** The processes under `root` (itself included), but for the keeper and what it runs: the host, not its shells. */
function hostTree(top: number): number[] {
  const parent = new Map<number, number>()
  for (const entry of readdirSync('/proc').filter((each) => /^\d+$/.test(each))) {
    try {
      parent.set(Number(entry), Number(readFileSync(`/proc/${entry}/stat`, 'latin1').split(') ')[1]?.split(' ')[1]))
    } catch {}
  }
  const keeper = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('keeper')
    } catch {
      return false
    }
  }
  const tree = [top]
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parent) if (ppid === tree[i] && !keeper(pid)) tree.push(pid)
  }
  return tree
}

/** Whether a host's crash record (beside its log directory, under `tmp`) lists `shellId` among the shells its keeper keeps. */
function crashRecordKeeps(tmp: string, shellId: string): boolean {
  const base = join(tmp, `dsh-bash-bg-${process.getuid?.() ?? 0}`)
  return existsSync(base) && readdirSync(base).filter((file) => file.endsWith('.json')).some((file) => {
    try {
      return (JSON.parse(readFileSync(join(base, file), 'utf8')) as { kept?: string[] }).kept?.includes(shellId) === true
    } catch {
      return false
    }
  })
}

/** A loopback port free a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The text of every user-role message of a request (the notices the model read among them). */
function userTexts(request: ChatRequest | undefined): string[] {
  return (request?.messages ?? []).filter((message) => message.role === 'user').map((message) =>
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''))
}

describe('background shells across runs of the real dsh CLI', () => {
  let install: DshInstall
  let tmp: string
  let home: string
  let workspace: string
  let hostTmp: string

  beforeAll(async () => {
    install = ensureDshCli(root)
    tmp = await makeTmpDir('gencode-resume-e2e-')
    home = join(tmp, 'home')
    workspace = join(tmp, 'workspace')
    hostTmp = join(tmp, 'tmp')
    mkdirSync(workspace, { recursive: true })
    mkdirSync(hostTmp, { recursive: true })
    const packs = join(tmp, 'packs')
    mkdirSync(packs, { recursive: true })
    const runner = spawnSync('npm', ['pack', '--json', '--pack-destination', packs, '--loglevel=error'], { cwd: join(fixtures, 'resume-runner'), encoding: 'utf8' })
    expect(runner.status, runner.stderr).toBe(0)
    const [info] = JSON.parse(runner.stdout) as [{ filename: string }]
    const tarballs = [...packPlugins(root, join(packs, 'plugins')), { name: '@gencode-ai/test-resume-runner', tarball: join(packs, info.filename) }]
    ensureProfilePlugins(install, home, PROFILE, tarballs)
  }, 600_000)

  afterAll(async () => {
    if (tmp) await removeTmpDir(tmp)
  })

  /** One run: the stock runner (run 1), or the resuming one; `script` is the model's side (`pid`: the dsh process). */
  type Script = (request: ChatRequest, results: SeenResult[], pid: number) => Reply | Promise<Reply>
  async function dsh(task: string, script: Script, options: { resume?: boolean, env?: NodeJS.ProcessEnv } = {}) {
    let pid = 0
    const model = await startScriptedModel((request, results) => script(request, results, pid))
    try {
      // A TMPDIR of its own: hosts that other tests boot meanwhile must not reap (or see) these runs' shells.
      const env = { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key', TMPDIR: hostTmp, ...options.env }
      const patches = options.resume === true ? [join(fixtures, 'resume-runner.cordis.patch.yml')] : []
      const child = spawnDsh(install, PROFILE, [task], { cwd: workspace, dshHome: home, env, patches, stdio: 'pipe' })
      pid = child.pid ?? 0
      const run = await collect(child)
      return { run, requests: model.requests.filter((request) => request.tools.length > 0) }
    } finally {
      await model.close()
    }
  }

  /** The profile's own layer: bash_bg's config for the runs that follow. */
  function profileConfig(config: Record<string, unknown>): void {
    const rows = Object.entries(config).map(([key, value]) => `    ${key}: ${JSON.stringify(value)}`)
    writeFileSync(join(home, 'profiles', PROFILE, 'cordis.patch.yml'), ['- id: tool-bash-bg', '  config:', ...rows.length === 0 ? ['    {}'] : rows, ''].join('\n'))
  }

  /** The lines of a request's user messages that name `shellId` (bash_bg's notices about it). */
  const linesAbout = (request: ChatRequest | undefined, shellId: string) =>
    userTexts(request).flatMap((text) => text.split(/\\n|\n/)).filter((line) => line.includes(shellId))

  /** Run 1's model: start `command` in the background, then answer (or `then` once it started); the shell id it got. */
  function starter(command: string, then: Script = () => ({ text: 'started' })): { script: Script, shellId: () => string } {
    let id = ''
    return {
      script: (request, results, pid) => {
        const started = results.find((result) => result.name === 'bash_bg')
        if (started === undefined) return { calls: [{ name: 'bash_bg', args: { command, run_in_background: true } }] }
        id = SHELL_ID.exec(started.text)?.[0] ?? ''
        return then(request, results, pid)
      },
      shellId: () => id,
    }
  }

  /** The keeper's exit file of `shellId`, wherever its session's ledger directory is. */
  const exitFileExists = (shellId: string) => {
    const ledgerDir = join(home, 'bash-bg', 'ledger')
    return existsSync(ledgerDir) && readdirSync(ledgerDir).some((dir) => existsSync(join(ledgerDir, dir, `${shellId}.exit.json`)))
  }

  it('keepOnExit: a shell that ends while no host runs is told once, with its exit code, by the next run; a third run adds nothing', async () => {
    profileConfig({ keepOnExit: true })
    const run1 = starter('sleep 3; echo done; exit 7')
    const first = await dsh('start it', run1.script)
    expect(first.run.code, first.run.stderr).toBe(0)
    const shellId = run1.shellId()
    expect(shellId).toMatch(SHELL_ID)
    await until(() => exitFileExists(shellId), 'the keeper to record its end')
    const second = await dsh('what happened?', () => ({ text: 'ok' }), { resume: true })
    expect(second.run.code, second.run.stderr).toBe(0)
    const told = linesAbout(second.requests[0]?.body, shellId)
    expect(told).toHaveLength(1)
    expect(told[0]).toContain('exited with code 7')
    const third = await dsh('anything else?', () => ({ text: 'no' }), { resume: true })
    expect(third.run.code, third.run.stderr).toBe(0)
    expect(linesAbout(third.requests[0]?.body, shellId)).toEqual(told)
  }, 300_000)

  it('default config: a shell running when run 1 ends is stopped, and run 2 is told so in one line', async () => {
    profileConfig({})
    const mark = `e2e_stopped_${process.pid}`
    const run1 = starter(`exec -a ${mark} sleep 300`)
    const first = await dsh('start it', run1.script)
    expect(first.run.code, first.run.stderr).toBe(0)
    expect(pidsNamed(mark)).toEqual([])
    const second = await dsh('what happened?', () => ({ text: 'ok' }), { resume: true })
    expect(second.run.code, second.run.stderr).toBe(0)
    const told = linesAbout(second.requests[0]?.body, run1.shellId())
    expect(told).toHaveLength(1)
    expect(told[0]).toContain('was stopped when the host exited')
  }, 300_000)

  it('keepOnExit: a server outlives run 1; run 2 lists it under its old id in /tasks and kill_shell stops it, leaving nothing', async () => {
    profileConfig({ keepOnExit: true })
    const port = await freePort()
    const mark = `e2e_server_${process.pid}`
    const server = `exec -a ${mark} node -e "require('http').createServer((q, r) => r.end('pong')).listen(${port}, '127.0.0.1')"`
    const run1 = starter(server)
    const first = await dsh('start the server', run1.script)
    expect(first.run.code, first.run.stderr).toBe(0)
    const shellId = run1.shellId()
    await until(() => pidsNamed(mark).length === 1, 'the server to run on')
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('pong')
    const second = await dsh('stop the server', (_request, results) => results.some((result) => result.name === 'kill_shell')
      ? { text: 'stopped' }
      : { calls: [{ name: 'kill_shell', args: { shell_id: shellId } }] }, { resume: true, env: { GENCODE_RESUME_COMMAND: '/tasks' } })
    expect(second.run.code, second.run.stderr).toBe(0)
    expect(second.run.stdout).toContain(shellId)
    expect(pidsNamed(mark)).toEqual([])
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow()
  }, 300_000)

  it('run 1 SIGKILLed while a shell runs: the shell runs on, and run 2 takes it back', async () => {
    profileConfig({})
    const mark = `e2e_crash_${process.pid}`
    const run1 = starter(`exec -a ${mark} sleep 300`, async (_request, results, pid) => {
      const shellId = SHELL_ID.exec(results.find((result) => result.name === 'bash_bg')?.text ?? '')?.[0] ?? ''
      // Killed once its host's crash record names the shell as one its keeper keeps for the session.
      await until(() => pidsNamed(mark).length === 1 && crashRecordKeeps(hostTmp, shellId), 'the shell, and the crash record keeping it')
      for (const each of hostTree(pid).toReversed()) process.kill(each, 'SIGKILL')
      return { text: 'never read' }
    })
    const first = await dsh('start it', run1.script)
    expect(first.run.signal).toBe('SIGKILL')
    const shellId = run1.shellId()
    expect(pidsNamed(mark)).toHaveLength(1)
    const second = await dsh('is it up?', (_request, results) => results.some((result) => result.name === 'kill_shell')
      ? { text: 'stopped' }
      : { calls: [{ name: 'kill_shell', args: { shell_id: shellId } }] }, { resume: true })
    expect(second.run.code, second.run.stderr).toBe(0)
    const told = linesAbout(second.requests[0]?.body, shellId)
    expect(told).toHaveLength(1)
    expect(told[0]).toContain('still running (taken back after a host restart')
    expect(pidsNamed(mark)).toEqual([])
  }, 300_000)

  it('keepOnExit with a short orphanTtlMs and no further run: the shell is gone after the TTL', async () => {
    profileConfig({ keepOnExit: true, orphanTtlMs: 2000 })
    const mark = `e2e_ttl_${process.pid}`
    const first = await dsh('start it', starter(`exec -a ${mark} sleep 300`).script)
    expect(first.run.code, first.run.stderr).toBe(0)
    await until(() => pidsNamed(mark).length === 0, 'the TTL to stop the shell')
  }, 300_000)
})
