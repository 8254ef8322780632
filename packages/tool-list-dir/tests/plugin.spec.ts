import { readFile } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { renderPrompt } from '@deepseek-ai/dsh-system-prompt'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { bootHost, execTool, promptCost, textOf, type Host } from '@gencode-ai/testkit'
import { ListDir, listDirHost, makeTree } from './harness.ts'
import { DEFAULT_GUIDANCE } from '../src/config.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

async function sectionNames(h: Host): Promise<string[]> {
  return (await h.ctx.systemPrompt.assemble()).sections.map((section) => section.name)
}

describe('plugin shape', () => {
  it('exports name, inject, Config, apply and no default export', () => {
    expect(ListDir.name).toBe('tool-list-dir')
    expect(ListDir.inject).toEqual(['tools', 'fs', 'systemPrompt'])
    expect(typeof ListDir.apply).toBe('function')
    expect('default' in ListDir).toBe(false)
  })

  it('cordis.patch.yml is one insert row naming this package, enabled through package.json', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { name: string, dsh: { bundle: { patch: string } } }
    const patch = await readFile(new URL(`../${pkg.dsh.bundle.patch}`, import.meta.url), 'utf8')
    const rows = patch.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))
    expect(rows).toEqual(['- insert:', `    - id: ${ListDir.name}`, `      name: '${pkg.name}'`])
  })
})

describe('config', () => {
  it('defaults: the README guidance as tool:list_directory, after the host sections, and 100 entries', async () => {
    host = await listDirHost()
    const assembly = await host.ctx.systemPrompt.assemble()
    const section = assembly.sections.find((entry) => entry.name === 'tool:list_directory')
    expect(section?.text).toBe(DEFAULT_GUIDANCE)
    expect(DEFAULT_GUIDANCE).toBe('Use the list_directory tool — not shell commands like ls — to browse directory structures. When truncated narrow the tree with pattern (matches directories too, keeps counts), or use glob to find files by name, grep to search contents.')
    expect(renderPrompt(assembly)).toContain(DEFAULT_GUIDANCE)
    const tree: Record<string, string> = {}
    for (let i = 0; i < 101; i++) tree[`f${i}`] = ''
    await makeTree(host.cwd, tree)
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: '.' }))).toContain('[1 item truncated, showing first 100 of 101 total]')
  })

  it('prompt cost: schema JSON + guidance within 270 DeepSeek V3 tokens, as the README records', async () => {
    host = await listDirHost()
    const cost = await promptCost(host.ctx, 'list_directory')
    expect(cost.guidance).toBe(46)
    expect(await readFile(new URL('../README.md', import.meta.url), 'utf8')).toContain(`Prompt cost: ${cost.total} tokens`)
    expect(cost.total).toBeLessThanOrEqual(270)
  })

  it('order places the section among others by value', async () => {
    host = await bootHost()
    host.ctx.systemPrompt.section({ name: 'before', order: 1300, text: 'b' })
    host.ctx.systemPrompt.section({ name: 'after', order: 1400, text: 'a' })
    await host.ctx.plugin(ListDir, {})
    const names = await sectionNames(host)
    expect(names.indexOf('before')).toBeLessThan(names.indexOf('tool:list_directory'))
    expect(names.indexOf('tool:list_directory')).toBeLessThan(names.indexOf('after'))
    await host.dispose()
    host = await bootHost()
    host.ctx.systemPrompt.section({ name: 'before', order: 1300, text: 'b' })
    await host.ctx.plugin(ListDir, { order: 1 })
    const reordered = await sectionNames(host)
    expect(reordered.indexOf('tool:list_directory')).toBeLessThan(reordered.indexOf('before'))
  })

  it('toolName renames the tool and its section; guidance "" registers no section', async () => {
    host = await listDirHost({ toolName: 'ls', guidance: '' })
    expect(host.ctx.tools.get('ls')).toBeDefined()
    expect(host.ctx.tools.get('list_directory')).toBeUndefined()
    expect((await sectionNames(host)).some((name) => name.startsWith('tool:'))).toBe(false)
    await host.dispose()
    host = await listDirHost({ toolName: 'ls', guidance: 'List with ls.' })
    const section = (await host.ctx.systemPrompt.assemble()).sections.find((entry) => entry.name === 'tool:ls')
    expect(section?.text).toBe('List with ls.')
  })

  it('maxEntries sets the cap and the limit maximum', async () => {
    host = await listDirHost({ maxEntries: 2 })
    await makeTree(host.cwd, { a: '', b: '', c: '' })
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: '.' }))).toContain('[1 item truncated, showing first 2 of 3 total]')
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: '.', limit: 3 }))).toContain('limit 3 is above the maximum of 2 entries per call')
  })

  const bad: [string, Record<string, unknown>][] = [
    ['maxEntries 0', { maxEntries: 0 }],
    ['maxEntries 1001', { maxEntries: 1001 }],
    ['maxEntries 1.5', { maxEntries: 1.5 }],
    ['maxEntries as a string', { maxEntries: '50' }],
    ['outsideWorkspace maybe', { outsideWorkspace: 'maybe' }],
    ['toolName with spaces', { toolName: 'list dir' }],
    ['order as a string', { order: 'first' }],
    ['cachedEntries -1', { cachedEntries: -1 }],
    ['cachedEntries past 10,000,000 (about 1 GB)', { cachedEntries: 10_000_001 }],
    ['cachedEntries as a string', { cachedEntries: 'lots' }],
  ]
  for (const [label, config] of bad) {
    it(`rejects ${label}, naming the key`, async () => {
      host = await bootHost()
      const key = Object.keys(config)[0]!
      await expect(host.ctx.plugin(ListDir, config)).rejects.toThrow(new RegExp(key))
      expect(host.ctx.tools.get('list_directory')).toBeUndefined()
    })
  }
})

describe('lifecycle', () => {
  it('disposing the plugin removes the tool, the section and the outside-workspace gate', async () => {
    host = await bootHost()
    const fiber = await host.ctx.plugin(ListDir, {})
    expect(host.ctx.tools.get('list_directory')).toBeDefined()
    expect(await sectionNames(host)).toContain('tool:list_directory')
    await fiber.dispose()
    expect(host.ctx.tools.get('list_directory')).toBeUndefined()
    expect(await sectionNames(host)).not.toContain('tool:list_directory')
    const result = await execTool(host.ctx, 'list_directory', { path: '/' })
    expect(result.isError && result.error.info?.code).toBe('UNKNOWN_TOOL')
    // The outside-workspace gate went with it: a stand-in tool of the same name is not gated.
    host.ctx.tools.register(defineTool({
      name: 'list_directory',
      description: 'stand-in',
      parameters: { path: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
      async execute(args) { return `listed ${args.path}` },
    }))
    expect(textOf(await execTool(host.ctx, 'list_directory', { path: '/' }))).toBe('listed /')
  })
})
