import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import CommandRuntime from '@deepseek-ai/dsh-commands'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { bootHost, execTool, type Host, promptCost } from '@gencode-ai/testkit'
import * as BashBg from '../src/index.ts'
import { DEFAULT_GUIDANCE } from '../src/config.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

const sectionNames = async (h: Host) => (await h.ctx.systemPrompt.assemble()).sections.map((section) => section.name)

describe('plugin', () => {
  it('registers the tool, the guidance section, /tasks and the backgroundShells service with the defaults', async () => {
    host = await bootHost()
    await host.ctx.plugin(CommandRuntime)
    await host.ctx.plugin(BashBg, {})
    expect(host.ctx.tools.get('bash_bg')).toBeDefined()
    expect(host.ctx.get('backgroundShells')?.logDir).toMatch(/dsh-bash-bg-/)
    const assembly = await host.ctx.systemPrompt.assemble()
    expect(assembly.sections.find((section) => section.name === 'tool:bash_bg')?.text).toBe(DEFAULT_GUIDANCE)
    const schema = assembly.tools.find((tool) => tool.name === 'bash_bg')
    expect(JSON.stringify(schema)).toContain('default 120000, max 600000')
    expect(host.ctx.commands.list(host.agent()).map((command) => command.name)).toContain('tasks')
  })

  it('orders its section by `order` (after a section with a lower order, before a higher one)', async () => {
    host = await bootHost()
    host.ctx.systemPrompt.section({ name: 'test:before', order: 1549, text: 'a' })
    host.ctx.systemPrompt.section({ name: 'test:after', order: 1551, text: 'b' })
    await host.ctx.plugin(BashBg, {})
    const names = await sectionNames(host)
    expect(names.indexOf('test:before')).toBe(names.indexOf('tool:bash_bg') - 1)
    expect(names.indexOf('test:after')).toBe(names.indexOf('tool:bash_bg') + 1)
  })

  it('fits the prompt budget: schema JSON + guidance, DeepSeek V3 tokens, as the README records and ≤ first-party bash\'s 432', async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, {})
    const { total: cost } = await promptCost(host.ctx, 'bash_bg')
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    expect(readme).toContain(`Prompt cost: ${cost} tokens`)
    expect(cost).toBeLessThanOrEqual(432)
    // Issue 30's budget with watch and the job_output pointers.
    expect(cost).toBeLessThanOrEqual(340)
  })

  it('takes toolName and an empty guidance', async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, { toolName: 'bash', guidance: '' })
    expect(host.ctx.tools.get('bash')).toBeDefined()
    expect(host.ctx.tools.get('bash_bg')).toBeUndefined()
    expect((await sectionNames(host)).filter((name) => name.startsWith('tool:bash'))).toEqual([])
    expect((await execTool(host.ctx, 'bash', { command: 'echo renamed' })).value).toMatchObject({ stdout: { text: 'renamed\n' } })
  })

  it('says in the default guidance what keepOnExit does; a configured guidance is left as written', async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, { keepOnExit: true })
    const text = (await host.ctx.systemPrompt.assemble()).sections.find((section) => section.name === 'tool:bash_bg')?.text ?? ''
    expect(text).toContain('Shells keep running when the host exits and are taken back when the session resumes.')
    expect(text).not.toContain('are killed')
    await host.dispose()
    host = await bootHost()
    await host.ctx.plugin(BashBg, { keepOnExit: true, guidance: 'mine' })
    expect((await host.ctx.systemPrompt.assemble()).sections.find((section) => section.name === 'tool:bash_bg')?.text).toBe('mine')
  })

  it('rejects a bad config with a ValidationError naming the key', async () => {
    host = await bootHost()
    for (const [config, key] of [
      [{ maxEntries: 0 }, 'maxEntries'],
      [{ timeoutMs: 1.5 }, 'timeoutMs'],
      [{ maxLogBytes: -1 }, 'maxLogBytes'],
      [{ toolName: 'has space' }, 'toolName'],
      [{ order: 'late' }, 'order'],
    ] as const) {
      const error = await Promise.resolve(host.ctx.plugin(BashBg, config as never)).then(() => undefined, (e: unknown) => e as Error)
      expect(error?.name).toBe('ValidationError')
      expect(error?.message).toContain(key)
    }
    const inverted = await Promise.resolve(host.ctx.plugin(BashBg, { timeoutMs: 700000 })).then(() => undefined, (e: unknown) => e as Error)
    expect(inverted?.message).toBe('tool-bash-bg: timeoutMs (700000) exceeds maxTimeoutMs (600000) — raise maxTimeoutMs or lower timeoutMs')
    expect((inverted as { code?: string } | undefined)?.code).toBe('INVALID_CONFIG')
    expect(host.ctx.tools.get('bash_bg')).toBeUndefined()
  })

  it('refuses a second registration of a first-party name in the same layer', async () => {
    host = await bootHost()
    host.ctx.tools.register(defineTool({
      name: 'bash', description: 'x', parameters: {},
      output: { schema: { type: 'string' }, render: () => [] },
      async execute() { return '' },
    }))
    const error = await Promise.resolve(host.ctx.plugin(BashBg, { toolName: 'bash' })).then(() => undefined, (e: unknown) => e as Error)
    expect(error).toBeInstanceOf(Error)
  })

  it('dispose removes the tool, the section, /tasks and the service', async () => {
    host = await bootHost()
    await host.ctx.plugin(CommandRuntime)
    const fiber = await host.ctx.plugin(BashBg, {})
    await fiber.dispose()
    expect(host.ctx.tools.get('bash_bg')).toBeUndefined()
    expect(await sectionNames(host)).not.toContain('tool:bash_bg')
    expect(host.ctx.get('backgroundShells')).toBeUndefined()
    expect(host.ctx.commands.list(host.agent()).map((command) => command.name)).not.toContain('tasks')
  })
})
