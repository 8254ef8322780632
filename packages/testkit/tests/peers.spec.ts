// A plugin whose peer range refuses the host it runs on is refused by `dsh plugin add` (or
// installed with a warning): every peer range must admit the version the tests run on, and the
// DSH ranges the 0.1.1 release candidates too (a caret range on a prerelease does not).
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import semver from 'semver'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const require = createRequire(join(root, 'package.json'))

interface Manifest {
  name: string
  version: string
  private?: boolean
  peerDependencies?: Record<string, string>
}

const read = (path: string): Manifest => JSON.parse(readFileSync(path, 'utf8')) as Manifest
const plugins = readdirSync(join(root, 'packages'))
  .map((folder) => read(join(root, 'packages', folder, 'package.json')))
  .filter((manifest) => manifest.private !== true)

describe('peer ranges of the published plugins', () => {
  it('finds the four plugins, each with peers', () => {
    expect(plugins.map((p) => p.name).sort()).toEqual([
      '@gencode-ai/dsh-tool-bash-bg', '@gencode-ai/dsh-tool-kill-shell', '@gencode-ai/dsh-tool-list-dir', '@gencode-ai/dsh-tool-read',
    ])
    for (const plugin of plugins) expect(Object.keys(plugin.peerDependencies ?? {}).length, plugin.name).toBeGreaterThan(0)
  })

  for (const plugin of plugins) {
    it(`${plugin.name} admits the installed version of every peer and the DSH 0.1.1 release candidates`, () => {
      for (const [peer, range] of Object.entries(plugin.peerDependencies ?? {})) {
        const installed = read(require.resolve(`${peer}/package.json`)).version
        expect(semver.satisfies(installed, range), `${plugin.name}: ${peer}@${installed} against "${range}"`).toBe(true)
        if (peer.startsWith('@deepseek-ai/dsh-')) {
          for (const next of ['0.1.1-rc.0', '0.1.1-rc.2', '0.1.1']) {
            expect(semver.satisfies(next, range), `${plugin.name}: ${peer}@${next} against "${range}"`).toBe(true)
          }
          expect(semver.satisfies('0.2.0', range), `${plugin.name}: ${peer}@0.2.0 is a breaking line`).toBe(false)
        }
      }
    })
  }
})
