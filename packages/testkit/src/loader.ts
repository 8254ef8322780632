// Loader compositions booted as dsh boots them: a cordis.yml of host rows, patch layers, the activation audit.
import './polyfill.ts'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context, Logger, type Exporter } from '@deepseek-ai/cordis'
import Loader, { type Entry, type EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import type { PatchOptions } from '@deepseek-ai/cordis-plugin-include'
import { boot, loadOverlayPatches, mountRootInclude } from '@deepseek-ai/dsh-app-boot'
import { dshHomePath } from '@deepseek-ai/dsh-home-paths'
import { makeTmpDir, removeTmpDir } from './tmp.ts'

/** The diagnostic prefix dsh would print as `dsh`; ours names the kit. */
const BIN = 'testkit'

/**
 * The workspace root: bare plugin names resolve from its node_modules, where the hoisted install
 * links every package (the root package.json lists the four plugins for exactly this).
 */
const WORKSPACE_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * One patch layer, applied in order over the test cordis.yml like dsh applies bundle layers, the
 * profile's cordis.patch.yml and `--patch` overlays: a list of patch rows, a patch file, or patch
 * YAML (written to a file). Files are parsed by dsh's own parser (`loadOverlayPatches`).
 */
export type PatchLayer = PatchOptions[] | { file: string } | { yaml: string }

export interface CompositionOptions {
  /** dsh-fs-local's cwd; a fresh temp dir (removed on dispose) when omitted. */
  cwd?: string
  /** Rows appended to {@link hostRows} in the test cordis.yml. */
  rows?: EntryOptions[]
  /** Patch layers, applied in order as one flattened list (as dsh does). */
  patches?: PatchLayer[]
  /**
   * true (default): boot exactly as dsh does — an enabled row that failed or never activated
   * rejects the boot with dsh's message and disposes the tree. false: the same boot without that
   * final audit, so a test can inspect the settled tree (entry states, logs).
   */
  audit?: boolean
}

/** One line the composition logged (error/warn/info/debug), formatted without colors. */
export interface LogRecord {
  type: string
  name: string
  text: string
}

export interface Composition {
  /** The root context; services (ctx.tools, ctx.fs, ...) are those the rows provided. */
  ctx: Context
  /** dsh-fs-local's cwd. */
  cwd: string
  /** The directory holding the test cordis.yml (the config dir dsh would use). */
  dir: string
  /** Everything the tree logged since boot. */
  logs: LogRecord[]
  /** The Loader entry of a row, by its id. */
  entry(id: string): Entry | undefined
  dispose(): Promise<void>
}

/**
 * The host services our plugins need, as rows with the ids the dsh bundles use (so patches
 * address them as they would in a profile).
 */
export function hostRows(cwd: string): EntryOptions[] {
  return [
    { id: 'llm', name: '@deepseek-ai/dsh-llm' },
    { id: 'session', name: '@deepseek-ai/dsh-session' },
    { id: 'system-prompt', name: '@deepseek-ai/dsh-system-prompt', config: { persona: '' } },
    { id: 'tools', name: '@deepseek-ai/dsh-tools' },
    { id: 'agent', name: '@deepseek-ai/dsh-agent' },
    { id: 'fs-local', name: '@deepseek-ai/dsh-fs-local', config: { cwd } },
    { id: 'jobs', name: '@deepseek-ai/dsh-jobs-local' },
  ]
}

/**
 * The patch layer a package declares in package.json `dsh.bundle.patch` (what `dsh plugin add`
 * enables), located as dsh's profile loader does. The Loader imports the package's built entry,
 * so this refuses a package whose build is missing or older than its src.
 */
export function bundlePatch(packageDir: string): { file: string } {
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    name?: string
    main?: string
    dsh?: { bundle?: { patch?: string } }
  }
  const declared = manifest.dsh?.bundle?.patch
  if (declared === undefined) {
    throw new Error(`package.json in ${packageDir} declares no dsh.bundle.patch — add "dsh": { "bundle": { "patch": "./cordis.patch.yml" } }`)
  }
  assertBuilt(packageDir, manifest.name ?? packageDir, manifest.main ?? 'index.js')
  return { file: join(packageDir, declared) }
}

/** A stale dist would make a Loader test pass or fail on yesterday's code. */
function assertBuilt(packageDir: string, name: string, main: string): void {
  const entry = resolve(packageDir, main)
  const build = 'run `npx -y pnpm@9.15.9 run -s build` in the workspace root'
  if (!existsSync(entry)) throw new Error(`${name} is not built (no ${entry}) — ${build}`)
  // A plugin's bundle holds the workspace's shared package (packages/common) too.
  const src = Math.max(newest(join(packageDir, 'src')), newest(join(packageDir, '..', 'common', 'src')))
  const out = newest(dirname(entry))
  if (src > out) throw new Error(`${name}'s build in ${dirname(entry)} is older than its src — ${build}`)
}

function newest(dir: string): number {
  if (!existsSync(dir)) return 0
  let max = 0
  for (const item of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (item.isFile()) max = Math.max(max, statSync(join(item.parentPath ?? item.path, item.name)).mtimeMs)
  }
  return max
}

async function readLayers(dir: string, layers: readonly PatchLayer[]): Promise<PatchOptions[]> {
  const patches: PatchOptions[] = []
  for (const [index, layer] of layers.entries()) {
    if (Array.isArray(layer)) {
      patches.push(...structuredClone(layer))
    } else if ('file' in layer) {
      patches.push(...loadOverlayPatches(BIN, layer.file))
    } else {
      const file = join(dir, `patch-${index + 1}.yml`)
      await writeFile(file, layer.yaml)
      patches.push(...loadOverlayPatches(BIN, file))
    }
  }
  return patches
}

function logExporter(logs: LogRecord[]): Exporter {
  const exporter: Exporter = {
    colors: false,
    levels: { default: 3 },
    export: (message) => {
      logs.push({ type: message.type, name: message.name, text: Logger.format(exporter, message) })
    },
  }
  return exporter
}

/**
 * Boot a real Cordis Loader composition the way dsh does (dsh-app-boot's `boot`: a Loader, the
 * root `cordis:include` of a cordis.yml with the patch layers, the `cordis:group` builtin, wait
 * until the tree settles, then the activation audit). The cordis.yml is test-only: the host rows
 * plus `rows`, written to a temp dir. Plugin rows name npm packages, resolved from the
 * workspace's node_modules like an installed plugin; workspace plugins must be built first.
 */
export async function bootComposition(options: CompositionOptions = {}): Promise<Composition> {
  const dir = await makeTmpDir('gencode-composition-')
  const ownCwd = options.cwd === undefined
  const cwd = options.cwd ?? await makeTmpDir()
  const cleanup = async (): Promise<void> => {
    await removeTmpDir(dir)
    if (ownCwd) await removeTmpDir(cwd)
  }
  const logs: LogRecord[] = []
  const base = pathToFileURL(WORKSPACE_ROOT).href
  try {
    const configPath = join(dir, 'cordis.yml')
    // JSON is YAML: the include parses it with its own dialect, no serializer needed.
    await writeFile(configPath, `# test-only composition (@gencode-ai/testkit)\n${JSON.stringify([...hostRows(cwd), ...options.rows ?? []], null, 2)}\n`)
    const patches = await readLayers(dir, options.patches ?? [])
    const capture = (ctx: Context): void => { ctx.logger.exporter(logExporter(logs)) }
    let ctx: Context
    if (options.audit ?? true) {
      ctx = await boot(BIN, configPath, patches, capture, base)
    } else {
      // boot() minus its final assertEntriesActivated, step for step.
      ctx = new Context()
      try {
        ctx.baseUrl = pathToFileURL(dir).href + '/'
        ctx.provide('dshHomePath', dshHomePath)
        await ctx.plugin(Loader)
        capture(ctx)
        await mountRootInclude(ctx, configPath, patches, base)
        await ctx.get('loader')?.await()
      } catch (error) {
        await ctx.fiber.dispose()
        throw error
      }
    }
    return {
      ctx,
      cwd,
      dir,
      logs,
      entry: (id) => [...ctx.loader.entries()].find((entry) => entry.options.id === id),
      async dispose() {
        await ctx.fiber.dispose()
        await cleanup()
      },
    }
  } catch (error) {
    await cleanup()
    throw error
  }
}
