import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import { KILL_POLICY } from '../../tool-bash-bg/src/shells/kill-policy.ts'
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import { bootComposition, bootHost, bundlePatch, execTool, textOf, type Composition, type Host, promptCost } from '@gencode-ai/testkit'
import { checkConfig, DEFAULT_GUIDANCE } from '../src/config.ts'
import * as KillShell from '../src/index.ts'
import { alive, bootKs, marker, pidsWithArgv0, startBg, until } from './harness.ts'

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..')
const bashBgDir = join(pkgDir, '../tool-bash-bg')
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { name: string, exports: { '.': { default: string } }, dsh: { bundle: { patch: string } } }

let host: Host | undefined
let comp: Composition | undefined
afterEach(async () => {
  await host?.dispose()
  host = undefined
  await comp?.dispose()
  comp = undefined
})

async function sectionNames(on: Host | Composition): Promise<string[]> {
  return (await on.ctx.systemPrompt.assemble()).sections.map((section) => section.name)
}

describe('config', () => {
  it('defaults live in the schema', () => {
    expect(KillShell.Config({})).toEqual({
      toolName: 'kill_shell', guidance: DEFAULT_GUIDANCE, order: 1650, maxEntries: 10, timeoutMs: 5000, maxTimeoutMs: 60000,
    })
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['maxEntries of 0', { maxEntries: 0 }, 'maxEntries'],
    ['a fractional timeoutMs', { timeoutMs: 2.5 }, 'timeoutMs'],
    ['a negative maxTimeoutMs', { maxTimeoutMs: -1 }, 'maxTimeoutMs'],
    ['a toolName with spaces', { toolName: 'kill shell' }, 'toolName'],
    ['a non-numeric order', { order: 'late' }, 'order'],
  ]
  for (const [what, config, key] of bad) {
    it(`rejects ${what} at load with a ValidationError naming the key`, async () => {
      host = await bootHost()
      await host.ctx.plugin(BashBg, {})
      const error = await host.ctx.plugin(KillShell, config).then(() => undefined, (caught: unknown) => caught)
      expect((error as Error).name).toBe('ValidationError')
      expect((error as Error).message).toContain(key)
      expect(host.ctx.tools.get('kill_shell')).toBeUndefined()
    })
  }

  it('the default wait is the one a bare host job_kill waits while no stopper is attached (bash-bg\'s kill policy)', () => {
    expect(KillShell.Config({}).timeoutMs).toBe(KILL_POLICY.bareKill.timeoutMs)
  })

  it('the cross-key check lives with the schema (config.ts), not in apply', () => {
    expect(() => checkConfig(KillShell.Config({ timeoutMs: 60_001 }))).toThrow('invalid tool-kill-shell config: timeoutMs (60001) exceeds maxTimeoutMs (60000) — lower timeoutMs or raise maxTimeoutMs')
    expect(() => checkConfig(KillShell.Config({ timeoutMs: 60_000 }))).not.toThrow()
  })

  it('rejects a default timeout above the maximum, naming both keys', async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, {})
    const error = await host.ctx.plugin(KillShell, { timeoutMs: 70_000 }).then(() => undefined, (caught: unknown) => caught)
    expect((error as Error).message).toBe('invalid tool-kill-shell config: timeoutMs (70000) exceeds maxTimeoutMs (60000) — lower timeoutMs or raise maxTimeoutMs')
    expect(host.ctx.tools.get('kill_shell')).toBeUndefined()
  })

  it('toolName renames the tool and its section; an empty guidance registers none', async () => {
    host = await bootKs({ killShell: { toolName: 'stop_shell' } })
    expect(host.ctx.tools.get('stop_shell')).toBeDefined()
    expect(host.ctx.tools.get('kill_shell')).toBeUndefined()
    expect(await sectionNames(host)).toContain('tool:stop_shell')
    await host.dispose()
    host = await bootKs({ killShell: { guidance: '' } })
    expect(await sectionNames(host)).not.toContain('tool:kill_shell')
    expect(host.ctx.tools.get('kill_shell')).toBeDefined()
  })

  it('the schema states the configured default and maximum timeout', async () => {
    host = await bootKs({ killShell: { timeoutMs: 2000, maxTimeoutMs: 9000 } })
    const timeout = (host.ctx.tools.get('kill_shell')!.parameters as { properties: { timeout: { description: string } } }).properties.timeout
    expect(timeout.description).toBe('ms before SIGKILL; default 2000, max 9000')
  })
})

describe('composition', () => {
  it('without tool-bash-bg it is never applied; it appears once the registry does', async () => {
    host = await bootHost()
    await host.ctx.plugin(KillShell, {})
    expect(host.ctx.tools.get('kill_shell')).toBeUndefined()
    await host.ctx.plugin(BashBg, {})
    await until(() => host?.ctx.tools.get('kill_shell') !== undefined, 'kill_shell to be applied')
    expect(await sectionNames(host)).toContain('tool:kill_shell')
  })

  it('prompt: the section sits by its order; schema JSON + guidance cost the README figure, within 150 DeepSeek V3 tokens', async () => {
    host = await bootKs()
    host.ctx.systemPrompt.section({ name: 'probe:before', order: 1649, text: 'before' })
    host.ctx.systemPrompt.section({ name: 'probe:after', order: 1651, text: 'after' })
    const names = await sectionNames(host)
    expect(names.indexOf('probe:before')).toBeLessThan(names.indexOf('tool:kill_shell'))
    expect(names.indexOf('tool:kill_shell')).toBeLessThan(names.indexOf('probe:after'))
    const prompt = await host.ctx.systemPrompt.assemble()
    expect(prompt.sections.find((section) => section.name === 'tool:kill_shell')?.text).toBe(DEFAULT_GUIDANCE)
    // Measured as the model receives the tool: the runtime's schema JSON, plus the section text.
    const { total: cost } = await promptCost(host.ctx, 'kill_shell')
    const readme = readFileSync(join(pkgDir, 'README.md'), 'utf8')
    expect(readme).toContain(`Prompt cost: ${cost} tokens`)
    expect(cost).toBeLessThanOrEqual(150)
  })

  it('names itself to bash_bg and sets the wait of a bare host job_kill; disposing it restores bash-bg\'s own', async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, {})
    // bash-bg's own reads of what is attached (not part of the service contract).
    const shells = host.ctx.get('backgroundShells') as unknown as ShellRegistry
    expect(shells.defaultKill()).toEqual({ signal: 'SIGTERM', force: true, timeoutMs: 5000 })
    expect(shells.stopTool()).toBeUndefined()
    const fiber = await host.ctx.plugin(KillShell, { timeoutMs: 1200, toolName: 'stop_shell' })
    expect(shells.defaultKill()).toEqual({ signal: 'SIGTERM', force: true, timeoutMs: 1200 })
    // bash_bg points the model at this tool under its configured name.
    const started = await execTool(host.ctx, 'bash_bg', { command: 'sleep 30', run_in_background: true })
    expect(textOf(started)).toContain('Read the file for output; stop the shell with stop_shell.')
    await fiber.dispose()
    expect(shells.defaultKill()).toEqual({ signal: 'SIGTERM', force: true, timeoutMs: 5000 })
    expect(shells.stopTool()).toBeUndefined()
  })

  it('dispose removes the tool and the section; the shells stay with their registry', async () => {
    host = await bootKs()
    const fiber = await host.ctx.plugin(KillShell, { toolName: 'kill_two' })
    expect(host.ctx.tools.get('kill_two')).toBeDefined()
    expect(await sectionNames(host)).toContain('tool:kill_two')
    const bg = await startBg(host, 'sleep 60')
    await fiber.dispose()
    expect(host.ctx.tools.get('kill_two')).toBeUndefined()
    expect(await sectionNames(host)).not.toContain('tool:kill_two')
    expect(host.ctx.tools.get('kill_shell')).toBeDefined()
    // kill-shell starts nothing, so it stops nothing: the shell is bash-bg's to stop.
    expect(alive(bg.pid)).toBe(true)
  })

  it('disposing the host after a kill that left survivors leaves no orphans', async () => {
    const ks = await bootKs()
    host = ks
    const mark = marker('orphan')
    const bg = await startBg(ks, `trap '' TERM; while :; do exec -a ${mark} sleep 1 & wait; done`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(ks.ctx, 'kill_shell', { shell_id: bg.shell_id, force: false, timeout: 100 })
    expect(result.value).toMatchObject({ success: false, outcome: 'survivors' })
    host = undefined
    // A dispose that hung would fail on the test's own timeout.
    await ks.dispose()
    const left = [...pidsWithArgv0(mark), ...(alive(bg.pid) ? [bg.pid] : [])]
    for (const pid of left) process.kill(pid, 'SIGKILL')
    expect(left).toEqual([])
  })
})

// The Loader imports the built packages: CI builds everything before vitest (`npm test`), and
// bundlePatch refuses a missing or stale build rather than testing yesterday's code.
describe('cordis.patch.yml row, booted by the Loader as dsh does', () => {
  it('matches package.json and the plugin name; named exports only', async () => {
    const text = readFileSync(bundlePatch(pkgDir).file, 'utf8')
    const entry = await import(pathToFileURL(join(pkgDir, pkg.exports['.'].default)).href) as typeof import('../src/index.ts')
    expect(text).toContain(`- insert:\n    - id: ${entry.name}\n      name: '${pkg.name}'\n`)
    expect(Object.keys(entry).sort()).toEqual(['Config', 'apply', 'inject', 'name'])
  })

  it('with the bash-bg row it enables kill_shell, which stops a shell; a disabled row removes it', async () => {
    comp = await bootComposition({ patches: [bundlePatch(bashBgDir), bundlePatch(pkgDir)] })
    expect(comp.entry('tool-kill-shell')?.options.name).toBe(pkg.name)
    expect(await sectionNames(comp)).toContain('tool:kill_shell')
    const bg = await startBg(comp as unknown as Host, 'sleep 60')
    const result = await execTool(comp.ctx, 'kill_shell', { shell_id: bg.shell_id })
    expect(textOf(result)).toMatch(new RegExp(`^Stopped ${bg.shell_id}: sent SIGTERM;`))
    expect(alive(bg.pid)).toBe(false)
    expect(comp.logs.filter((log) => log.type === 'error')).toEqual([])
    await comp.dispose()
    comp = await bootComposition({ patches: [bundlePatch(bashBgDir), bundlePatch(pkgDir), { yaml: '- id: tool-kill-shell\n  disabled: true\n' }] })
    expect(comp.ctx.tools.get('kill_shell')).toBeUndefined()
    expect(comp.ctx.tools.get('bash_bg')).toBeDefined()
  })

  it('without the bash-bg row the row never activates, and dsh refuses the boot', async () => {
    const outcome = await bootComposition({ patches: [bundlePatch(pkgDir)] })
      .then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => String(error))
    expect(outcome).toContain('tool-kill-shell')
  })

  it('a bad row config fails the boot naming the key', async () => {
    const outcome = await bootComposition({ patches: [bundlePatch(bashBgDir), bundlePatch(pkgDir), [{ id: 'tool-kill-shell', config: { maxEntries: 0 } }]] })
      .then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => String(error))
    expect(outcome).toContain('maxEntries')
  })
})
