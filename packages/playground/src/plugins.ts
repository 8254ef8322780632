// The workspace's tool-plugin packages: discovered, ordered by their peers, and loaded from their builds.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One tool-plugin package of this workspace: a package that declares a dsh bundle patch. */
export interface PluginPackage {
  /** Absolute package directory (packages/<folder>). */
  dir: string
  /** The npm name, e.g. @gencode-ai/dsh-tool-list-dir. */
  name: string
  /** Built entry (dist/index.js); absent until `pnpm run build` produced it. */
  entry: string
  built: boolean
  /** Workspace plugin packages this one needs (its peers among them). */
  needs: string[]
}

/** A package that cannot load, and why. */
interface Skipped {
  pkg: PluginPackage
  reason: string
}

interface Manifest {
  name?: string
  private?: boolean
  main?: string
  dsh?: { bundle?: { patch?: string } }
  peerDependencies?: Record<string, string>
}

/**
 * Every plugin package under `<root>/packages`, ordered so a package comes after the workspace
 * packages it peers on (bash-bg before kill-shell). Only packages declaring `dsh.bundle.patch`
 * count: that is what makes `dsh plugin add` enable them.
 */
export function discoverPlugins(root: string): PluginPackage[] {
  const base = join(root, 'packages')
  const found: PluginPackage[] = []
  for (const folder of readdirSync(base).sort()) {
    const dir = join(base, folder)
    const manifestPath = join(dir, 'package.json')
    if (!existsSync(manifestPath)) continue
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest
    if (manifest.private === true || manifest.dsh?.bundle?.patch === undefined || manifest.name === undefined) continue
    const entry = join(dir, manifest.main ?? 'dist/index.js')
    found.push({ dir, name: manifest.name, entry, built: existsSync(entry), needs: Object.keys(manifest.peerDependencies ?? {}) })
  }
  const names = new Set(found.map((p) => p.name))
  for (const p of found) p.needs = p.needs.filter((n) => names.has(n))
  return topoSort(found)
}

function topoSort(packages: PluginPackage[]): PluginPackage[] {
  const byName = new Map(packages.map((p) => [p.name, p]))
  const out: PluginPackage[] = []
  const seen = new Set<string>()
  const visit = (p: PluginPackage) => {
    if (seen.has(p.name)) return
    seen.add(p.name)
    for (const need of p.needs) {
      const dep = byName.get(need)
      if (dep !== undefined) visit(dep)
    }
    out.push(p)
  }
  packages.forEach(visit)
  return out
}

/** The packages that can load: built, and every workspace package they need is loadable too. */
export function loadablePlugins(packages: readonly PluginPackage[]): { ok: PluginPackage[], skipped: Skipped[] } {
  const ok: PluginPackage[] = []
  const skipped: Skipped[] = []
  const okNames = new Set<string>()
  for (const pkg of packages) {
    const missing = pkg.needs.filter((n) => !okNames.has(n))
    if (!pkg.built) skipped.push({ pkg, reason: `not built (${pkg.entry} is missing — run npm run build)` })
    else if (missing.length > 0) skipped.push({ pkg, reason: `needs ${missing.join(', ')}, which is not loadable` })
    else {
      ok.push(pkg)
      okNames.add(pkg.name)
    }
  }
  return { ok, skipped }
}
