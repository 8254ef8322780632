// Each published plugin as its tarball: installed alone (with only what its package.json declares), it loads in a host.
/*
 * `npm pack` of each plugin; the tarball extracted into a fresh node_modules outside the workspace, beside
 * links to exactly the packages it declares (dependencies and peers, from the workspace's install) and the
 * tarballs of the plugins it peers on; then its dist imported by plain Node resolution into real DSH services,
 * and one call made. Every bare import the shipped JS and .d.ts name must be declared or a node builtin:
 * the shared package (packages/common) is bundled in, never imported.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { isBuiltin } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Context } from '@deepseek-ai/cordis'
import { bootServices, execTool, makeTmpDir, removeTmpDir, textOf } from '@gencode-ai/testkit'
import { helveticaPdf } from '../../tool-read/tests/pdf-fixtures.ts'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const PLUGINS = ['tool-list-dir', 'tool-read', 'tool-bash-bg', 'tool-kill-shell'] as const

interface Manifest {
  name: string
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
/** What a package.json lets the package import: its dependencies and peers. */
function declared({ dependencies = {}, peerDependencies = {} }: Manifest): string[] {
  return [...Object.keys(dependencies), ...Object.keys(peerDependencies)]
}
/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (specifier: string): string => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')

/** The specifiers a built file imports: static and dynamic imports, re-exports, require and require.resolve. */
function bareImports(text: string): string[] {
  const found = new Set<string>()
  const patterns = [
    /\b(?:import|export)\s[^'"]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire(?:\.resolve)?\(\s*["']([^"']+)["']\s*\)/g,
    /\.resolve\(\s*["']([^"'./][^"']*)["']\s*\)/g,
  ]
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.add(match[1] as string)
  return [...found].filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('/'))
}

let dir: string
const tarballs = new Map<string, string>()
beforeAll(async () => {
  dir = await makeTmpDir('gencode-packed-')
  for (const folder of PLUGINS) {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: join(ROOT, 'packages', folder), encoding: 'utf8',
    })) as [{ filename: string }]
    tarballs.set(folder, join(dir, packed[0].filename))
  }
}, 60_000)
afterAll(async () => { await removeTmpDir(dir) })

const installs = new Map<string, Promise<string>>()
const installAlone = (folder: string): Promise<string> => {
  if (!installs.has(folder)) installs.set(folder, install(folder))
  return installs.get(folder) as Promise<string>
}

/** A fresh install of `folder` alone: its tarball, the tarballs of the plugins it peers on, links to what they declare. */
async function install(folder: string): Promise<string> {
  const home = join(dir, `alone-${folder}`)
  const modules = join(home, 'node_modules')
  const plugins = new Map(PLUGINS.map((name) => [manifestOf(join(ROOT, 'packages', name)).name, name]))
  const wanted = [folder]
  const links = new Set<string>()
  for (let index = 0; index < wanted.length; index++) {
    const name = wanted[index] as string
    const target = join(modules, manifestOf(join(ROOT, 'packages', name)).name)
    await mkdir(target, { recursive: true })
    execFileSync('tar', ['-xzf', tarballs.get(name) as string, '-C', target, '--strip-components=1'])
    for (const dep of declared(manifestOf(target))) {
      const plugin = plugins.get(dep)
      if (plugin !== undefined) {
        if (!wanted.includes(plugin)) wanted.push(plugin)
      } else {
        links.add(dep)
      }
    }
  }
  for (const dep of links) {
    await mkdir(join(modules, dep, '..'), { recursive: true })
    await symlink(join(ROOT, 'node_modules', dep), join(modules, dep))
  }
  await writeFile(join(home, 'package.json'), '{ "private": true, "type": "module" }\n')
  return join(modules, manifestOf(join(ROOT, 'packages', folder)).name)
}

async function load(ctx: Context, pkg: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { main: string }
  const plugin = await import(pathToFileURL(join(pkg, manifest.main)).href) as Parameters<Context['plugin']>[0]
  await ctx.plugin(plugin, {})
}

describe('each packed plugin, installed alone', () => {
  it('the import scan sees every form a bundle uses', () => {
    const text = 'import { a } from "x";\nexport * from "@s/y/sub";\nimport "z";\nawait import("d");\nrequire.resolve("w/package.json"); import("./local.js")'
    expect(bareImports(text).sort()).toEqual(['@s/y/sub', 'd', 'w/package.json', 'x', 'z'])
  })

  it.each(PLUGINS)('%s: every bare import in its tarball is declared in its package.json or a node builtin', async (folder) => {
    const pkg = await installAlone(folder)
    const manifest = manifestOf(pkg)
    const names = new Set(declared(manifest))
    const files = readdirSync(join(pkg, 'dist'), { recursive: true, encoding: 'utf8' }).filter((file) => /\.(?:js|d\.ts)$/.test(file))
    expect(files).toContain('index.js')
    const undeclared: string[] = []
    for (const file of files) {
      for (const specifier of bareImports(readFileSync(join(pkg, 'dist', file), 'utf8'))) {
        if (!isBuiltin(specifier) && !names.has(packageOf(specifier))) undeclared.push(`dist/${file}: ${specifier}`)
      }
    }
    expect(undeclared).toEqual([])
  })

  it('list_directory loads from its tarball and lists', async () => {
    const pkg = await installAlone('tool-list-dir')
    const cwd = join(dir, 'work-list')
    await mkdir(join(cwd, 'sub'), { recursive: true })
    const ctx = await bootServices({ cwd })
    try {
      await load(ctx, pkg)
      expect(ctx.tools.get('list_directory')).toBeDefined()
      expect(textOf(await execTool(ctx, 'list_directory', { path: '.' }))).toContain('sub/')
    } finally {
      await ctx.fiber.dispose()
    }
  })

  it('read_file loads from its tarball and reads, and its PDF worker is found beside the bundle', async () => {
    const pkg = await installAlone('tool-read')
    expect(existsSync(join(pkg, 'dist', 'pdf-worker.js'))).toBe(true)
    const cwd = join(dir, 'work-read')
    await mkdir(cwd, { recursive: true })
    await writeFile(join(cwd, 'a.txt'), 'packed\n')
    await writeFile(join(cwd, 'b.pdf'), helveticaPdf('packed pdf'))
    const ctx = await bootServices({ cwd })
    try {
      await load(ctx, pkg)
      expect(ctx.tools.get('read_file')).toBeDefined()
      expect(textOf(await execTool(ctx, 'read_file', { file_path: 'a.txt' }))).toContain('packed')
      expect(textOf(await execTool(ctx, 'read_file', { file_path: 'b.pdf' }))).toContain('packed pdf')
    } finally {
      await ctx.fiber.dispose()
    }
  })

  it('bash_bg and kill_shell load from their tarballs (kill_shell beside its bash_bg peer) and run, wait_for\'s matching thread included', async () => {
    const pkg = await installAlone('tool-kill-shell')
    const cwd = join(dir, 'work-shell')
    await mkdir(cwd, { recursive: true })
    const ctx = await bootServices({ cwd })
    try {
      await load(ctx, join(pkg, '..', 'dsh-tool-bash-bg'))
      await load(ctx, pkg)
      expect(ctx.tools.get('bash_bg')).toBeDefined()
      expect(ctx.tools.get('kill_shell')).toBeDefined()
      expect(textOf(await execTool(ctx, 'bash_bg', { command: 'echo packed' }))).toContain('packed')
      // wait_for matches on a thread that loads match-worker.js from beside the bundle.
      const waited = await execTool(ctx, 'bash_bg', { command: 'echo packed-ready; sleep 30', run_in_background: true, wait_for: '^packed-ready$' })
      expect(textOf(waited)).toContain('Matched wait_for: packed-ready')
      expect(textOf(await execTool(ctx, 'kill_shell', { shell_id: 'bg-none' }))).toContain('Shell not found: bg-none')
    } finally {
      await ctx.fiber.dispose()
    }
  })
})
