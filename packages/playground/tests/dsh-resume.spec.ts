// Background shells across runs of the real dsh CLI (issue 29, "Done when"): run 1 is the stock headless runner;
// later runs resume run 1's session through ctx.agents.resume with a test-only runner a patch installs (rc.8's
// headless CLI cannot resume). The model is scripted; the first request of each resumed run is the witness.
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { ensureDshCli, ensureProfilePlugins, packPlugins, spawnDsh, type DshInstall } from '../src/dsh-cli.ts'
import { startScriptedModel, type ChatRequest, type Reply, type SeenResult } from './model-server.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const fixtures = fileURLToPath(new URL('fixtures/', import.meta.url))
const PROFILE = 'headless'
const RUN_LIMIT_MS = 120_000

interface Run { code: number | null, signal: string | null, stdout: string, stderr: string }

function collect(child: ReturnType<typeof spawn>): Promise<Run> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS)
  return new Promise((resolve) => child.on('exit', (code, signal) => {
    clearTimeout(timer)
    resolve({ code, signal, stdout, stderr })
  }))
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

  beforeAll(async () => {
    install = ensureDshCli(root)
    tmp = await makeTmpDir('gencode-resume-e2e-')
    home = join(tmp, 'home')
    workspace = join(tmp, 'workspace')
    mkdirSync(workspace, { recursive: true })
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

  /** One run: the stock runner (run 1), or the resuming one; `script` is the model's side. */
  type Script = (request: ChatRequest, results: SeenResult[]) => Reply
  async function dsh(task: string, script: Script, options: { resume?: boolean, env?: NodeJS.ProcessEnv } = {}) {
    const model = await startScriptedModel(script)
    try {
      const env = { DEEPSEEK_BASE_URL: model.url, DEEPSEEK_API_KEY: 'dummy-key', ...options.env }
      const patches = options.resume === true ? [join(fixtures, 'resume-runner.cordis.patch.yml')] : []
      const run = await collect(spawnDsh(install, PROFILE, [task], { cwd: workspace, dshHome: home, env, patches, stdio: 'pipe' }))
      return { run, requests: model.requests.filter((request) => request.tools.length > 0) }
    } finally {
      await model.close()
    }
  }

  it('run 2 resumes run 1\'s session: its first request holds run 1\'s conversation', async () => {
    const first = await dsh('remember the word quartz', () => ({ text: 'noted quartz' }))
    expect(first.run.code, first.run.stderr).toBe(0)
    const second = await dsh('which word?', () => ({ text: 'quartz' }), { resume: true })
    expect(second.run.code, second.run.stderr).toBe(0)
    expect(second.run.stdout.trim()).toBe('quartz')
    expect(userTexts(second.requests[0]?.body).join('\n')).toContain('remember the word quartz')
  }, 300_000)
})
