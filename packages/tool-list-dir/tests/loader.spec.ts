import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type {} from '@deepseek-ai/dsh-tools'
import { bootComposition, bundlePatch, execTool, textOf, type Composition } from '@gencode-ai/testkit'
import { makeTree } from './harness.ts'

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))
let comp: Composition | undefined
afterEach(async () => { await comp?.dispose(); comp = undefined })

describe('the package row, booted through the real Cordis Loader', () => {
  it('cordis.patch.yml enables list_directory with its guidance section', async () => {
    comp = await bootComposition({ patches: [bundlePatch(PACKAGE)] })
    await makeTree(comp.cwd, { 'src/a.ts': 'x' })
    expect(textOf(await execTool(comp.ctx, 'list_directory', { path: '.' }))).toContain('DIR               src/')
    const sections = (await comp.ctx.systemPrompt.assemble()).sections.map((section) => section.name)
    expect(sections).toContain('tool:list_directory')
  })

  it('a config row changes behaviour; a disabled row removes the tool', async () => {
    comp = await bootComposition({ patches: [bundlePatch(PACKAGE), { yaml: '- id: tool-list-dir\n  config:\n    maxEntries: 1\n' }] })
    await makeTree(comp.cwd, { a: '', b: '' })
    expect(textOf(await execTool(comp.ctx, 'list_directory', { path: '.' }))).toContain('[1 item truncated, showing first 1 of 2 total]')
    await comp.dispose()
    comp = await bootComposition({ patches: [bundlePatch(PACKAGE), { yaml: '- id: tool-list-dir\n  disabled: true\n' }] })
    expect(comp.ctx.tools.get('list_directory')).toBeUndefined()
  })

  it('a bad config fails the boot, naming the key', async () => {
    await expect(bootComposition({ patches: [bundlePatch(PACKAGE), [{ id: 'tool-list-dir', config: { maxEntries: 0 } }]] }))
      .rejects.toThrow(/dsh-tool-list-dir: ValidationError[\s\S]*maxEntries/)
  })
})
