import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Context } from '@deepseek-ai/cordis'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import SandboxedFileSystem from '@deepseek-ai/dsh-fs-sandbox'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import type { FileSystem } from '@deepseek-ai/dsh-fs'
import type { SubprocessRuntime, SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import { LocalSubprocessRuntime } from '@deepseek-ai/dsh-subprocess-local'
import { execTool, makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { runtimeIsLocal, worldOf } from '../src/shells/world.ts'
import { bootBashBg, marker, pidsWithMarker, until, type BgHost } from './harness.ts'
import { worldFileSystem } from './world-rig.ts'

const disposers: (() => Promise<void>)[] = []
afterEach(async () => { for (const dispose of disposers.splice(0)) await dispose() })

/** Real providers, each in its own context, as a composition would load them. */
async function provide<T>(plugin: unknown, key: 'fs' | 'subprocess', config?: object): Promise<T> {
  const ctx = new Context()
  disposers.push(() => ctx.fiber.dispose())
  await ctx.plugin(plugin as never, config as never)
  return ctx.get(key) as T
}

async function tmp(): Promise<string> {
  const dir = await makeTmpDir('world-choice-')
  disposers.push(() => removeTmpDir(dir))
  return dir
}

class Tracing extends LocalSubprocessRuntime {
  override spawn(spec: SubprocessSpawnSpec) { return super.spawn(spec) }
}

class LookupOnly extends LocalSubprocessRuntime {
  override resolveExecutable(command: string) { return super.resolveExecutable(command) }
}

describe('runtimeIsLocal: dsh-subprocess-local\'s own spawn, by shape, failing safe', () => {
  it('holds for the unmodified runtime and a subclass that leaves spawn alone', async () => {
    expect(runtimeIsLocal(await provide(LocalSubprocessRuntime, 'subprocess'))).toBe(true)
    expect(runtimeIsLocal(await provide(LookupOnly, 'subprocess'))).toBe(true)
  })

  it('fails for a subclass or an instance that puts another spawn in place, and for any other object', async () => {
    expect(runtimeIsLocal(await provide(Tracing, 'subprocess'))).toBe(false)
    const patched = await provide<SubprocessRuntime>(LocalSubprocessRuntime, 'subprocess')
    const original = patched.spawn.bind(patched)
    Object.assign(patched, { spawn: (spec: SubprocessSpawnSpec) => original(spec) })
    expect(runtimeIsLocal(patched)).toBe(false)
    // A wrapper class that delegates to the local runtime is another world too.
    const inner = await provide<SubprocessRuntime>(LocalSubprocessRuntime, 'subprocess')
    expect(runtimeIsLocal(new (class Wrapper { spawn(spec: SubprocessSpawnSpec) { return inner.spawn(spec) } })())).toBe(false)
    expect(runtimeIsLocal({ spawn: () => undefined })).toBe(false)
    expect(runtimeIsLocal(Object.create(null) as object)).toBe(false)
  })
})

describe('worldOf: our process layer only where both the files and the processes are this host\'s', () => {
  it('is local with the local family of filesystems and no runtime or the unmodified one', async () => {
    const cwd = await tmp()
    const local = await provide<FileSystem>(LocalFileSystem, 'fs', { cwd })
    const runtime = await provide<SubprocessRuntime>(LocalSubprocessRuntime, 'subprocess')
    expect(worldOf(undefined, undefined).kind).toBe('local')
    expect(worldOf(local, undefined).kind).toBe('local')
    expect(worldOf(local, runtime).kind).toBe('local')
    const ctx = new Context()
    disposers.push(() => ctx.fiber.dispose())
    await ctx.plugin(SandboxPolicy, { mode: 'workspace-write', workspaceRoot: cwd })
    await ctx.plugin(SandboxedFileSystem, { cwd })
    expect(worldOf(ctx.get('fs'), runtime).kind).toBe('local')
  })

  it('is the subprocess world when either half is another world\'s, and refuses a non-local filesystem with no runtime', async () => {
    const cwd = await tmp()
    const local = await provide<FileSystem>(LocalFileSystem, 'fs', { cwd })
    const remote = await provide<FileSystem>(worldFileSystem({ workspace: cwd, worldDir: cwd }), 'fs', { cwd })
    const runtime = await provide<SubprocessRuntime>(LocalSubprocessRuntime, 'subprocess')
    const tracing = await provide<SubprocessRuntime>(Tracing, 'subprocess')
    const tracingWorld = worldOf(local, tracing)
    expect(tracingWorld.kind === 'subprocess' && tracingWorld.runtime === tracing).toBe(true)
    const remoteWorld = worldOf(remote, runtime)
    expect(remoteWorld.kind === 'subprocess' && remoteWorld.runtime === runtime).toBe(true)
    expect(() => worldOf(remote, undefined)).toThrow(/ctx\.fs is not local and no ctx\.subprocess is composed: nothing was run/)
  })
})

describe('the product composition (dsh-fs-local + dsh-subprocess-local)', () => {
  let host: BgHost | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  it('keeps our own process layer: the shell carries its marks and the value names no other world', async () => {
    host = await bootBashBg({}, { before: async (h) => { await h.ctx.plugin(LocalSubprocessRuntime) } })
    const mark = marker('localworld')
    const started = await execTool(host.ctx, 'bash_bg', { command: `exec -a ${mark} sleep 60`, run_in_background: true }, { agent: host.agent() })
    const value = started.value as { shell_id: string, world?: string }
    expect(value.world).toBeUndefined()
    await until(() => pidsWithMarker(mark, true).length === 1, 'the sleep')
    const [pid] = pidsWithMarker(mark, true)
    expect(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')).toContain(`DSH_BG_SHELL=${value.shell_id}`)
  })
})
