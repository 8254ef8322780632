// The product path end to end: the real dsh CLI (rc.8 on Node 22), our four packed plugins
// installed with `dsh plugin add`, the real base bundle (sandbox workspace-write + approval on),
// headless runs against our scripted model, and the session log as the witness.
import { spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { accessSync, constants, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { discoverPlugins } from '../src/plugins.ts'
import { ensureDshCli, ensureProfilePlugins, packPlugins, spawnDsh, type DshInstall } from '../src/dsh-cli.ts'
import { collect } from './cli-run.ts'
import { resultsOf as resultsOfRequest, startScriptedModel, type Reply, type SeenResult } from './model-server.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8')
const PROFILE = 'headless'


interface LoggedResult { name: string, args: Record<string, unknown>, text: string, isError: boolean }

/** Every tool call and its result from the session logs under a DSH home (decoded under Node 22). */
function loggedResults(install: DshInstall, dshHome: string): LoggedResult[] {
  const out = spawnSync(install.node, [join(root, 'scripts', 'read-sessions.mjs'), dshHome], { encoding: 'utf8' })
  expect(out.status, out.stderr).toBe(0)
  const calls = new Map<string, { name: string, args: Record<string, unknown> }>()
  const results: LoggedResult[] = []
  for (const line of out.stdout.trim().split('\n')) {
    const { event } = JSON.parse(line) as { event: LoggedEvent }
    if (event.type === 'tool/call') calls.set(event.data.callId, { name: event.data.name, args: JSON.parse(event.data.arguments || '{}') })
    if (event.type === 'tool/result') {
      for (const block of event.data.message.content) {
        const call = calls.get(block.toolCallId)
        results.push({
          name: call?.name ?? '?',
          args: call?.args ?? {},
          isError: block.isError === true,
          text: block.content.map((part) => part.text ?? `[${part.type}]`).join(''),
        })
      }
    }
  }
  return results
}

/** The session-log events read here: a tool call, and a tool result message. */
interface LoggedEvent {
  type: string
  data: {
    callId: string
    name: string
    arguments?: string
    message: { content: { toolCallId: string, isError?: boolean, content: { type: string, text?: string }[] }[] }
  }
}

const SHELL_ID = /\bbg-[a-z0-9]{6}\b/
const OUTPUT_FILE = /Output file: (\S+)/

/**
 * The model's side of the four-tool session: list the workspace, start a background shell,
 * try a second one (over the profile's maxEntries: 1), read the first one's output_file until
 * its echo shows, kill it, try a write outside the workspace in the foreground, then answer.
 * Each step reads the earlier results from the request.
 */
function fourToolScript(probe: string | undefined, outside: string) {
  return async (_req: unknown, results: SeenResult[]): Promise<Reply> => {
    const last = results.at(-1)
    const started = results.find((r) => r.name === 'bash_bg' && SHELL_ID.test(r.text))
    if (results.length === 0) return { calls: [{ name: 'list_directory', args: { path: '.' } }] }
    if (results.length === 1) return { calls: [{ name: 'list_directory', args: { path: '.', long: true } }] }
    if (last?.name === 'list_directory') {
    // A server-like shell: the call returns once its ready line is in the log (wait_for).
      const server = 'echo hello-from-bg; sleep 0.3; echo "listening on port 8080"; sleep 300'
      return { calls: [{ name: 'bash_bg', args: { command: server, run_in_background: true, wait_for: 'listening on port \\d+', description: 'e2e server' } }] }
    }
    if (last?.name === 'bash_bg' && results.filter((r) => r.name === 'bash_bg').length === 1) {
      return { calls: [{ name: 'bash_bg', args: { command: 'sleep 300', run_in_background: true } }] }
    }
    const reads = results.filter((r) => r.name === 'read_file')
    const outputFile = started && OUTPUT_FILE.exec(started.text)?.[1]
    if (outputFile && !reads.some((r) => r.text.includes('hello-from-bg')) && reads.length < 20) {
    // The echo may not have reached the log yet: give it a moment before reading again.
      if (reads.length > 0) await new Promise((resolve) => setTimeout(resolve, 250))
      return { calls: [{ name: 'read_file', args: { file_path: outputFile } }] }
    }
    if (started && !results.some((r) => r.name === 'kill_shell')) {
      return { calls: [{ name: 'kill_shell', args: { shell_id: SHELL_ID.exec(started.text)![0] } }] }
    }
    // A file outside the workspace (not a shell log): read_file asks, and headless has nobody to say yes.
    if (!results.some((r) => r.name === 'read_file' && r.args.file_path === outside)) {
      return { calls: [{ name: 'read_file', args: { file_path: outside } }] }
    }
    // Last, a foreground command writing outside the workspace: the sandbox must stop it.
    if (probe !== undefined && !results.some((r) => r.name === 'bash_bg' && r.args.run_in_background !== true)) {
      return { calls: [{ name: 'bash_bg', args: { command: `echo probe > ${probe}; echo "write exit=$?"` } }] }
    }
    return { text: 'four tools done' }
  }
}

/**
 * Where the sandbox probe writes: outside the workspace and outside the temp areas workspace-write
 * leaves writable (/tmp and os.tmpdir(), where a checkout or even HOME may live), in a directory
 * this test can write to: HOME, the checkout, or /var/tmp. Undefined when none qualifies.
 */
function sandboxProbeDir(): string | undefined {
  const temp = ['/tmp', tmpdir()].map((area) => realpathSync(area))
  for (const dir of [homedir(), root, '/var/tmp']) {
    let real: string
    try {
      real = realpathSync(dir)
      accessSync(real, constants.W_OK)
    } catch {
      continue
    }
    if (!temp.some((area) => real === area || real.startsWith(`${area}/`))) return real
  }
  return undefined
}

describe('the real dsh CLI with the four plugins', () => {
  let install: DshInstall
  let tarballs: { name: string, tarball: string }[]
  let tmp: string

  beforeAll(() => {
    const plugins = discoverPlugins(root)
    expect(plugins.map((p) => p.name).sort()).toEqual([
      '@gencode-ai/dsh-tool-bash-bg', '@gencode-ai/dsh-tool-kill-shell', '@gencode-ai/dsh-tool-list-dir', '@gencode-ai/dsh-tool-read',
    ])
    for (const p of plugins) expect(p.built, `${p.name} must be built (npm test runs the build first)`).toBe(true)
    install = ensureDshCli(root)
  }, 600_000)

  beforeAll(async () => {
    tmp = await makeTmpDir('gencode-e2e-')
    tarballs = packPlugins(root, join(tmp, 'packs'))
  }, 120_000)

  afterAll(async () => {
    if (tmp) await removeTmpDir(tmp)
  })

  it('runs list_directory, bash_bg, read_file and kill_shell in a headless session, configured by the profile', async () => {
    const home = join(tmp, 'home')
    const workspace = join(tmp, 'workspace')
    mkdirSync(join(workspace, 'src'), { recursive: true })
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) writeFileSync(join(workspace, name), `${name}\n`)
    ensureProfilePlugins(install, home, PROFILE, tarballs)
    // The plugins enabled themselves through their dsh.bundle patches.
    const manifest = JSON.parse(readFileSync(join(home, 'profiles', PROFILE, 'package.json'), 'utf8')) as { dsh: { profile: { bundles: string[] } } }
    expect(manifest.dsh.profile.bundles).toEqual(expect.arrayContaining(tarballs.map((t) => t.name)))
    writeFileSync(join(home, 'profiles', PROFILE, 'cordis.patch.yml'), fixture('profile.cordis.patch.yml'))

    const dump = await collect(spawnDsh(install, PROFILE, ['--dump-config'], { cwd: workspace, dshHome: home, stdio: 'pipe' }))
    expect(dump.code, dump.stderr).toBe(0)
    // The real product composition: sandbox in workspace-write, the approval service, our rows.
    for (const row of ['sandbox', 'sandbox-policy', 'bash-sandbox', 'fs-sandbox', 'approval', 'tool-list-dir', 'tool-read', 'tool-bash-bg', 'tool-kill-shell']) {
      expect(dump.stdout).toContain(`- id: ${row}\n`)
    }
    expect(dump.stdout).toContain("process.env.DSH_PERMISSION_MODE ?? 'workspace-write'")

    const probeHome = sandboxProbeDir()
    const probe = probeHome && join(probeHome, `.gencode-sandbox-probe-${process.pid}`)
    const outside = join(tmp, 'outside.txt')
    writeFileSync(outside, 'secret\n')
    const model = await startScriptedModel(fourToolScript(probe, outside))
    try {
      const env = { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key' }
      const run = await collect(spawnDsh(install, PROFILE, ['use the four tools'], { cwd: workspace, dshHome: home, env, stdio: 'pipe' }))
      expect(run.stderr).not.toMatch(/error/i)
      expect(run.code).toBe(0)
      expect(run.stdout.trim()).toBe('four tools done')
      // The model was offered all four tools.
      expect(model.requests.at(-1)!.tools).toEqual(expect.arrayContaining(['list_directory', 'read_file', 'bash_bg', 'kill_shell']))
    } finally {
      await model.close()
    }

    const results = loggedResults(install, home)
    if (process.env.E2E_DEBUG) console.log(JSON.stringify(results, null, 2))
    const byName = (name: string) => results.filter((r) => r.name === name)
    // list_directory, under the profile's maxEntries: 3: directories first, cut after 3 of 5.
    const [listing] = byName('list_directory')
    expect(listing!.isError).toBe(false)
    expect(listing!.text).toContain('src')
    expect(listing!.text).toContain('a.txt')
    expect(listing!.text).not.toContain('d.txt')
    expect(listing!.text).toMatch(/2 items truncated/)
    // Under dsh-fs-sandbox the fast path serves the listing: long mode has modes and times.
    const [, long] = byName('list_directory')
    expect(long!.text).toMatch(/ r[w-][x-](?:[r-][w-][x-]){2} /)
    expect(long!.text).not.toContain('not reported by this filesystem provider')
    // bash_bg: started, then the profile's maxEntries: 1 refuses a second running shell.
    const [started, second] = byName('bash_bg')
    expect(started!.isError).toBe(false)
    expect(started!.text).toMatch(SHELL_ID)
    expect(started!.text).toContain('Matched wait_for: listening on port 8080')
    expect(second!.isError).toBe(true)
    expect(second!.text).toContain(SHELL_ID.exec(started!.text)![0])
    // read_file read the shell's output_file (outside the workspace) without an approval prompt.
    const reads = byName('read_file').filter((r) => r.args.file_path !== outside)
    expect(reads.every((r) => !r.isError)).toBe(true)
    expect(reads.at(-1)!.text).toMatch(/1\thello-from-bg/)
    // kill_shell stopped it: the group is gone.
    const [kill] = byName('kill_shell')
    expect(kill!.isError).toBe(false)
    const pid = Number(/pid (\d+)/.exec(started!.text)![1])
    expect(() => process.kill(-pid, 0)).toThrow()
    // The approval service is composed: a read outside the workspace asked, and was refused.
    const refused = byName('read_file').find((r) => r.args.file_path === outside)!
    expect(refused.isError).toBe(true)
    expect(refused.text).toContain('requires approval')
    expect(refused.text).not.toContain('secret')
    // The base bundle's workspace-write sandbox confined bash_bg: the outside write failed.
    if (probe === undefined) {
      console.warn('skipped the sandbox write probe: no writable directory outside the temp areas (HOME, the checkout and /var/tmp are all under /tmp or not writable)')
    } else {
      const foreground = byName('bash_bg').find((r) => r.args.run_in_background !== true)!
      expect(foreground.text).toMatch(/write exit=[1-9]/)
      const leaked = existsSync(probe)
      rmSync(probe, { force: true })
      expect(leaked).toBe(false)
    }
  }, 300_000)

  it('a disabled: true row in the profile removes the tool from what the model is offered', async () => {
    const home = join(tmp, 'home')
    const workspace = join(tmp, 'workspace')
    writeFileSync(join(home, 'profiles', PROFILE, 'cordis.patch.yml'), fixture('profile.cordis.patch.yml') + fixture('disable-read.cordis.patch.yml'))
    const model = await startScriptedModel(() => ({ text: 'nothing to do' }))
    try {
      const run = await collect(spawnDsh(install, PROFILE, ['say hi'], { cwd: workspace, dshHome: home, env: { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key' }, stdio: 'pipe' }))
      expect(run.code, run.stderr).toBe(0)
      const tools = model.requests.find((r) => r.tools.length > 0)!.tools
      expect(tools).not.toContain('read_file')
      expect(tools).toEqual(expect.arrayContaining(['list_directory', 'bash_bg', 'kill_shell']))
    } finally {
      await model.close()
    }
  }, 300_000)

  it('an agent preset row configures list_directory and read_file for the sessions of that preset (dsh web)', async () => {
    const home = join(tmp, 'web-home')
    const workspace = join(tmp, 'web-ws')
    mkdirSync(workspace, { recursive: true })
    for (const name of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(workspace, name), `${name}\n`)
    writeFileSync(join(workspace, 'three.txt'), 'one\ntwo\nthree\n')
    ensureProfilePlugins(install, home, 'web', tarballs)
    mkdirSync(join(home, '.agent-presets', 'gencode-lister'), { recursive: true })
    writeFileSync(join(home, '.agent-presets', 'gencode-lister', 'agent.cordis.yml'), fixture('preset.agent.cordis.yml'))

    const model = await startScriptedModel((_req, results) => {
      if (results.length === 0) return { calls: [{ name: 'list_directory', args: { path: '.' } }, { name: 'read_file', args: { file_path: 'three.txt' } }] }
      return { text: 'done' }
    })
    const web = spawnDsh(install, 'web', ['--no-open', '--port', '0'], { cwd: workspace, dshHome: home, env: { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key' }, stdio: 'pipe' })
    const exited = collect(web)
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ''
        web.stdout!.on('data', (d: Buffer) => {
          out += d.toString()
          const match = /http:\/\/127\.0\.0\.1:\d+/.exec(out)
          if (match) resolve(match[0])
        })
        web.on('exit', (code) => reject(new Error(`dsh web exited ${code} before serving`)))
      })
      // The web app's own API, as its browser UI calls it.
      const rpc = async (method: string, payload: unknown) => {
        const response = await fetch(`${url}/api/${method}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'client-request', rpcId: randomUUID(), method, payload }),
        })
        const body = await response.json() as { result: { ok: boolean, value: never, error?: unknown } }
        expect(body.result.ok, JSON.stringify(body.result.error)).toBe(true)
        return body.result.value
      }
      const resultsOf = async (agentPreset: string | undefined) => {
        const { sessionId } = await rpc('session.create', { cwd: workspace, ...agentPreset ? { agentPreset } : {} })
        await rpc('session.prompt', { sessionId, mode: 'queue', content: [{ type: 'text', text: `list and read (${agentPreset ?? 'default'})` }] })
        const mine = () => model.requests.find((r) => JSON.stringify(r.body.messages).includes(`(${agentPreset ?? 'default'})`) && r.body.messages.some((m) => m.role === 'tool'))
        for (let i = 0; i < 600 && mine() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 100))
        return resultsOfRequest(mine()!.body)
      }
      const preset = await resultsOf('gencode-lister')
      expect(preset.find((r) => r.name === 'list_directory')!.text).toMatch(/\[2 items truncated, showing first 2 of 4 total\]/)
      expect(preset.find((r) => r.name === 'read_file')!.text).toMatch(/^1\tone\n[^]*offset=2/)
      // The default preset runs on the profile's rows: the plugins' default config.
      const standard = await resultsOf(undefined)
      expect(standard.find((r) => r.name === 'list_directory')!.text).not.toContain('truncated')
      expect(standard.find((r) => r.name === 'list_directory')!.text).toContain('three.txt')
      expect(standard.find((r) => r.name === 'read_file')!.text).toContain('3\tthree')
    } finally {
      web.kill('SIGTERM')
      await exited
      await model.close()
    }
  }, 300_000)

  it('npm start with a key launches the dsh CLI in the directory npm start ran from', async () => {
    const home = join(tmp, 'start-home')
    const workspace = join(tmp, 'start-ws')
    mkdirSync(workspace, { recursive: true })
    writeFileSync(join(workspace, 'only-here.txt'), 'x\n')
    const model = await startScriptedModel((_req, results) => results.length === 0
      ? { calls: [{ name: 'list_directory', args: { path: '.' } }] }
      : { text: `listed: ${results[0]!.text.includes('only-here.txt')}` })
    try {
      const child = spawn(process.execPath, [join(root, 'scripts', 'start.mjs'), 'list this directory'], {
        cwd: root,
        env: { ...process.env, INIT_CWD: workspace, DSH_HOME: home, DEEPSEEK_API_KEY: 'dummy-key', DEEPSEEK_BASE_URL: model.url },
      })
      const run = await collect(child)
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout.trim()).toBe('listed: true')
    } finally {
      await model.close()
    }
    const [listing] = loggedResults(install, home).filter((r) => r.name === 'list_directory')
    expect(listing!.text).toContain('only-here.txt')
  }, 300_000)

  it('read_file decodes a GBK file and reads a PDF by page inside the real dsh CLI (Node 22, fs-sandbox)', async () => {
    const home = join(tmp, 'formats-home')
    const workspace = join(tmp, 'formats-ws')
    mkdirSync(workspace, { recursive: true })
    // A Chinese comment in GBK, long enough for a sure detection (a few characters are only a guess), and a
    // one-page PDF with a text layer, written by hand (offsets computed).
    writeFileSync(join(workspace, 'legacy.c'), Buffer.concat([Buffer.from('// '), Buffer.from('d6d0cec4d7a2cacda3bad5e2b8f6b3ccd0f2d3c3d3dab2e2cad4b1e0c2ebbcecb2e2b5c4b9a6c4dc', 'hex'), Buffer.from('\nint x;\n')]))
    const content = 'BT /F1 12 Tf 10 150 Td (Hello from page one) Tj ET'
    const objects = [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ]
    let pdf = '%PDF-1.4\n'
    const offsets = objects.map((body, i) => { const at = pdf.length; pdf += `${i + 1} 0 obj\n${body}\nendobj\n`; return at })
    const xref = pdf.length
    pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((at) => `${String(at).padStart(10, '0')} 00000 n \n`).join('')}`
    pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
    writeFileSync(join(workspace, 'spec.pdf'), pdf, 'latin1')
    ensureProfilePlugins(install, home, PROFILE, tarballs)
    const model = await startScriptedModel((_req, results) => results.length === 0
      ? { calls: [{ name: 'read_file', args: { file_path: 'legacy.c' } }, { name: 'read_file', args: { file_path: 'spec.pdf', pages: '' } }] }
      : { text: 'read' })
    try {
      const run = await collect(spawnDsh(install, PROFILE, ['read them'], { cwd: workspace, dshHome: home, env: { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key' }, stdio: 'pipe' }))
      expect(run.code, run.stderr).toBe(0)
    } finally {
      await model.close()
    }
    const reads = loggedResults(install, home).filter((r) => r.name === 'read_file')
    expect(reads.map((r) => r.isError)).toEqual([false, false])
    expect(reads[0]!.text).toBe('1\t// 中文注释：这个程序用于测试编码检测的功能\n2\tint x;\n\n(Decoded from GB18030. Edits must keep this encoding: edit/write would save UTF-8.)')
    expect(reads[1]!.text).toBe('--- Page 1 ---\nHello from page one')
  }, 300_000)
})
