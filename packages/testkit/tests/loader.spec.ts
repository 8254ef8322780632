import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { bootComposition, bundlePatch, execTool, makeTmpDir, removeTmpDir, textOf, type Composition } from '../src/index.ts'

// The first plugin package, booted by its npm name from its own cordis.patch.yml (built dist).
const LIST_DIR = fileURLToPath(new URL('../../tool-list-dir/', import.meta.url))
const FAILED = 3 // cordis FiberState.FAILED (a const enum: no runtime value to import)

let comp: Composition | undefined
const tmp: string[] = []
afterEach(async () => {
  await comp?.dispose()
  comp = undefined
  for (const dir of tmp.splice(0)) await removeTmpDir(dir)
})

async function sections(c: Composition): Promise<string[]> {
  return (await c.ctx.systemPrompt.assemble()).sections.map((section) => section.name)
}

describe('bootComposition', () => {
  it('boots a package row from its cordis.patch.yml, resolved by npm name, over the real host rows', async () => {
    const cwd = await makeTmpDir()
    tmp.push(cwd)
    await mkdir(join(cwd, 'sub'))
    await writeFile(join(cwd, 'note.txt'), 'hello')
    comp = await bootComposition({ cwd, patches: [bundlePatch(LIST_DIR)] })
    expect(comp.entry('tool-list-dir')?.options.name).toBe('@gencode-ai/dsh-tool-list-dir')
    expect(comp.ctx.tools.get('list_directory')).toBeDefined()
    expect(await sections(comp)).toContain('tool:list_directory')
    const result = await execTool(comp.ctx, 'list_directory', { path: cwd })
    expect(result.isError).toBeFalsy()
    const text = textOf(result)
    // The listing is the package's business; here: the call ran against the real cwd.
    expect(text).toContain(cwd)
    expect(text).toContain('sub/')
    expect(text).toContain('note.txt')
    expect(comp.logs.filter((log) => log.type === 'error')).toEqual([])
  })

  it('a later `disabled: true` patch row removes the plugin (tool and prompt section)', async () => {
    comp = await bootComposition({
      patches: [bundlePatch(LIST_DIR), { yaml: '- id: tool-list-dir\n  disabled: true\n' }],
    })
    expect(comp.entry('tool-list-dir')?.disabled).toBe(true)
    expect(comp.entry('tool-list-dir')?.fiber).toBeUndefined()
    expect(comp.ctx.tools.get('list_directory')).toBeUndefined()
    expect(await sections(comp)).not.toContain('tool:list_directory')
  })

  it('a patch row config replaces the row config: toolName ls registers ls, not list_directory', async () => {
    comp = await bootComposition({
      patches: [bundlePatch(LIST_DIR), [{ id: 'tool-list-dir', config: { toolName: 'ls' } }]],
    })
    expect(comp.ctx.tools.get('ls')).toBeDefined()
    expect(comp.ctx.tools.get('list_directory')).toBeUndefined()
    await writeFile(join(comp.cwd, 'x.txt'), '')
    expect(textOf(await execTool(comp.ctx, 'ls', { path: comp.cwd }))).toContain('x.txt')
  })

  it('a bad row config fails the boot the way dsh does: the entry and its ValidationError are named', async () => {
    // A boot that wrongly succeeds is disposed too, so a failing run leaks no tree.
    const outcome = await bootComposition({
      patches: [bundlePatch(LIST_DIR), [{ id: 'tool-list-dir', config: { maxEntries: 0 } }]],
    }).then(async (booted) => { await booted.dispose(); return 'booted' }, (error: unknown) => error)
    expect(outcome).toBeInstanceOf(Error)
    expect((outcome as Error).message).toMatch(
      /^testkit: plugin tree failed to load: testkit: 1 entry did not activate\n@gencode-ai\/dsh-tool-list-dir: ValidationError: invalid config:\n {2}- \$\.maxEntries expected number >= 1 but got 0/,
    )
  })

  it('without the audit, the settled tree shows the Loader only logs it: entry FAILED, no tool, host up', async () => {
    comp = await bootComposition({
      audit: false,
      patches: [bundlePatch(LIST_DIR), [{ id: 'tool-list-dir', config: { maxEntries: 0 } }]],
    })
    expect(comp.entry('tool-list-dir')?.fiber?.state).toBe(FAILED)
    expect(comp.ctx.tools.get('list_directory')).toBeUndefined()
    expect(comp.entry('tools')?.fiber?.state).toBe(2) // ACTIVE: one bad row does not take the host down
    const errors = comp.logs.filter((log) => log.type === 'error')
    expect(errors.map((log) => log.text).join('\n')).toMatch(/ValidationError: invalid config:\n {2}- \$\.maxEntries expected number >= 1 but got 0/)
  })

  it('a patch that targets no row is a Loader warning, as in dsh (the patch list really is applied)', async () => {
    comp = await bootComposition({ patches: [[{ id: 'no-such-row', disabled: true }]] })
    expect(comp.logs).toContainEqual(expect.objectContaining({ type: 'warn', text: expect.stringContaining('patch: entry no-such-row not found') }))
  })
})

describe('bundlePatch', () => {
  async function fakePackage(manifest: object): Promise<string> {
    const dir = await makeTmpDir()
    tmp.push(dir)
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: '@x/p', main: 'dist/index.js', ...manifest }))
    return dir
  }

  it('locates the patch file the package declares', () => {
    expect(bundlePatch(LIST_DIR)).toEqual({ file: join(LIST_DIR, 'cordis.patch.yml') })
  })

  it('refuses a package without dsh.bundle.patch', async () => {
    const dir = await fakePackage({})
    expect(() => bundlePatch(dir)).toThrow(`package.json in ${dir} declares no dsh.bundle.patch`)
  })

  it('refuses an unbuilt package and a build older than its src', async () => {
    const dir = await fakePackage({ dsh: { bundle: { patch: './cordis.patch.yml' } } })
    expect(() => bundlePatch(dir)).toThrow(`@x/p is not built (no ${join(dir, 'dist/index.js')})`)
    await mkdir(join(dir, 'dist'))
    await mkdir(join(dir, 'src'))
    await writeFile(join(dir, 'dist/index.js'), '')
    await writeFile(join(dir, 'src/index.ts'), '')
    await utimes(join(dir, 'dist/index.js'), 1000, 1000)
    expect(() => bundlePatch(dir)).toThrow(`@x/p's build in ${join(dir, 'dist')} is older than its src`)
    await utimes(join(dir, 'src/index.ts'), 500, 500)
    expect(bundlePatch(dir)).toEqual({ file: join(dir, 'cordis.patch.yml') })
  })
})
