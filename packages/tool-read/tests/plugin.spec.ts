import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs'
import { open, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootComposition, bootHost, bundlePatch, execTool, makeTmpDir, removeTmpDir, textOf, type Composition, type Host, promptCost } from '@gencode-ai/testkit'
import { DEFAULT_GUIDANCE } from '../src/config.ts'
import { scanBytes } from '../src/formats/text/scan-bytes.ts'
import { scanTextChunks } from '../src/formats/text/scan-text.ts'
import { Read, readHost } from './harness.ts'

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..')
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
    expect(Read.Config({})).toEqual({
      toolName: 'read_file',
      order: 1150,
      guidance: DEFAULT_GUIDANCE,
      maxEntries: 2000,
      maxLineLength: 2000,
      maxBytes: 102400,
      maxBytesPerStep: 262144,
      dedupUnchanged: true,
      maxFileBytes: 52428800,
      pdfMemoryMB: 512,
      pdfTimeoutMs: 30000,
      outsideWorkspace: 'ask',
    })
  })

  const bad: [string, Record<string, unknown>, string][] = [
    ['maxEntries above 100000', { maxEntries: 100001 }, 'maxEntries'],
    ['maxEntries of 0', { maxEntries: 0 }, 'maxEntries'],
    ['a fractional maxLineLength', { maxLineLength: 1.5 }, 'maxLineLength'],
    ['a tiny maxBytes', { maxBytes: 10 }, 'maxBytes'],
    ['maxFileBytes of 0', { maxFileBytes: 0 }, 'maxFileBytes'],
    ['a tiny maxBytesPerStep', { maxBytesPerStep: 100 }, 'maxBytesPerStep'],
    ['a dedupUnchanged that is not a boolean', { dedupUnchanged: 'yes' }, 'dedupUnchanged'],
    ['pdfMemoryMB under 64', { pdfMemoryMB: 8 }, 'pdfMemoryMB'],
    ['a fractional pdfTimeoutMs', { pdfTimeoutMs: 1.5 }, 'pdfTimeoutMs'],
    ['an unknown outsideWorkspace', { outsideWorkspace: 'sometimes' }, 'outsideWorkspace'],
    ['a toolName with spaces', { toolName: 'read file' }, 'toolName'],
  ]
  for (const [what, config, key] of bad) {
    it(`rejects ${what} at load, naming the key`, async () => {
      host = await bootHost()
      const error = await host.ctx.plugin(Read, config).then(() => undefined, (caught: unknown) => caught)
      expect(error).toBeInstanceOf(Error)
      expect((error as Error).name).toBe('ValidationError')
      expect((error as Error).message).toContain(key)
      expect(host.ctx.tools.get(typeof config.toolName === 'string' ? config.toolName : 'read_file')).toBeUndefined()
    })
  }

  it('toolName renames the tool and its section; an empty guidance registers no section', async () => {
    host = await readHost({ toolName: 'cat_file', guidance: '' })
    expect(host.ctx.tools.get('cat_file')).toBeDefined()
    expect(host.ctx.tools.get('read_file')).toBeUndefined()
    expect(await sectionNames(host)).not.toContain('tool:cat_file')
  })
})

describe('prompt', () => {
  it('registers the guidance section; tool schema JSON + guidance cost at most 185 DeepSeek V3 tokens', async () => {
    host = await readHost()
    const prompt = await host.ctx.systemPrompt.assemble()
    const section = prompt.sections.find((entry) => entry.name === 'tool:read_file')
    expect(section?.text).toBe(DEFAULT_GUIDANCE)
    const { total: cost } = await promptCost(host.ctx, 'read_file')
    expect(readFileSync(join(pkgDir, 'README.md'), 'utf8')).toContain(`Prompt cost: ${cost} tokens`)
    expect(cost).toBeLessThanOrEqual(185)
  })
})

describe('lifecycle', () => {
  it('dispose removes the tool and its section, leaving other instances', async () => {
    host = await readHost()
    const fiber = await host.ctx.plugin(Read, { toolName: 'read_two' })
    expect(host.ctx.tools.get('read_two')).toBeDefined()
    expect(await sectionNames(host)).toContain('tool:read_two')
    await fiber.dispose()
    expect(host.ctx.tools.get('read_two')).toBeUndefined()
    expect(await sectionNames(host)).not.toContain('tool:read_two')
    expect(await sectionNames(host)).toContain('tool:read_file')
  })

  it('a pre-aborted call never dispatches', async () => {
    host = await readHost()
    await writeFile(join(host.cwd, 'a.txt'), 'a\n')
    const controller = new AbortController()
    controller.abort()
    const result = await execTool(host.ctx, 'read_file', { file_path: 'a.txt' }, { signal: controller.signal })
    expect(result.isError).toBe(true)
    expect(result.isError ? result.error.info?.code : undefined).toBe('ABORTED_BEFORE_DISPATCH')
  })

  /** Whether this process holds `path` open (the scan under way), from /proc/self/fd. */
  function isOpen(path: string): boolean {
    for (const fd of readdirSync('/proc/self/fd')) {
      try {
        if (readlinkSync(`/proc/self/fd/${fd}`) === path) return true
      } catch {
        // An fd closed while listing.
      }
    }
    return false
  }

  /** Read `name`, aborting the call once the file is open: after dispatch, path lookup and stat. */
  async function abortMidScan(on: Host, name: string, args: Record<string, unknown>) {
    const path = realpathSync(join(on.cwd, name))
    const controller = new AbortController()
    const observed: string[] = []
    on.ctx.on('fs/observed', (target, observation) => { observed.push(`${target.displayPath} ${observation.kind}`) })
    let finished = false
    let sawOpen = false
    const watch = () => {
      if (finished) return
      if (isOpen(path)) {
        sawOpen = true
        controller.abort()
      } else {
        setImmediate(watch)
      }
    }
    setImmediate(watch)
    const result = await execTool(on.ctx, 'read_file', { file_path: name, ...args }, { signal: controller.signal })
    finished = true
    return { result, sawOpen, observed, stillOpen: isOpen(path) }
  }

  async function writeLong(path: string): Promise<void> {
    // 40 MiB of 64-byte lines: under the 64 MiB exact-total limit, so the scan reads it all.
    const handle = await open(path, 'w')
    const block = Buffer.from('x'.repeat(63) + '\n').toString().repeat(16384)
    for (let i = 0; i < 40; i++) await handle.write(block)
    await handle.close()
  }

  for (const [what, options] of [['the local fast path', {}], ['a sandboxing provider', { sandbox: 'workspace-write' as const }]] as const) {
    it(`an abort once the scan is under way stops it (${what}): read aborted, nothing observed`, async () => {
      host = await readHost({}, options)
      await writeLong(join(host.cwd, 'long.txt'))
      const { result, sawOpen, observed, stillOpen } = await abortMidScan(host, 'long.txt', { offset: 600000 })
      expect(sawOpen).toBe(true)
      expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_ABORTED')
      expect(textOf(result)).toBe('Error: read aborted')
      // The model saw nothing, so the observation policy is not told it did.
      expect(observed).toEqual([])
      if (what === 'the local fast path') expect(stillOpen).toBe(false)
    })
  }

  it('both scanners stop between chunks once the signal is aborted mid-scan', async () => {
    host = await readHost()
    const path = join(host.cwd, 'mid.txt')
    await writeFile(path, 'line\n'.repeat(400_000))
    // A signal that turns aborted after its first check: the scan is then under way.
    const lateSignal = () => {
      let checks = 0
      return { get aborted() { return ++checks > 1 } } as AbortSignal
    }
    const request = { offset: 300_000, limit: 10, maxLineLength: 2000, maxBytes: 102400 }
    const data = readFileSync(path)
    const blocks = async function* () {
      for (let at = 0; at < data.length; at += 1 << 20) yield data.subarray(at, at + (1 << 20))
    }
    await expect(scanBytes(blocks(), request, undefined, lateSignal())).rejects.toThrow('read aborted')
    const chunks = ['a\n'.repeat(10), 'b\n'.repeat(10), 'c\n']
    await expect(scanTextChunks(chunks, request, undefined, lateSignal())).rejects.toThrow('read aborted')
  })
})

describe('cordis.patch.yml row, booted by the Loader as dsh does', () => {
  beforeAll(() => {
    execFileSync(process.execPath, [join(pkgDir, '../../node_modules/typescript/bin/tsc'), '-b', pkgDir], { stdio: 'inherit' })
  }, 120_000)

  it('matches package.json and the plugin name; named exports only', async () => {
    const text = readFileSync(join(pkgDir, pkg.dsh.bundle.patch), 'utf8')
    const entry = await import(pathToFileURL(join(pkgDir, pkg.exports['.'].default)).href) as typeof import('../src/index.ts')
    expect(text).toContain(`- insert:\n    - id: ${entry.name}\n      name: '${pkg.name}'\n`)
    expect(Object.keys(entry).sort()).toEqual(['Config', 'apply', 'inject', 'name'])
  })

  it('enables read_file and its section over the real host rows; a disabled row removes it', async () => {
    const cwd = await makeTmpDir()
    await writeFile(join(cwd, 'row.txt'), 'loaded by the Loader\n')
    comp = await bootComposition({ cwd, patches: [bundlePatch(pkgDir)] })
    expect(comp.entry('tool-read')?.options.name).toBe(pkg.name)
    expect(comp.ctx.tools.get('read_file')).toBeDefined()
    expect(await sectionNames(comp)).toContain('tool:read_file')
    const result = await execTool(comp.ctx, 'read_file', { file_path: 'row.txt' })
    expect(textOf(result)).toBe('1\tloaded by the Loader')
    expect(comp.logs.filter((log) => log.type === 'error')).toEqual([])
    await comp.dispose()
    comp = await bootComposition({ patches: [bundlePatch(pkgDir), { yaml: '- id: tool-read\n  disabled: true\n' }] })
    expect(comp.ctx.tools.get('read_file')).toBeUndefined()
    expect(await sectionNames(comp)).not.toContain('tool:read_file')
    await removeTmpDir(cwd)
  })

  it('a bad row config fails the boot naming the key', async () => {
    const outcome = await bootComposition({ patches: [bundlePatch(pkgDir), [{ id: 'tool-read', config: { maxEntries: 0 } }]] })
      .then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => error)
    expect(String(outcome)).toContain('maxEntries')
  })
})
