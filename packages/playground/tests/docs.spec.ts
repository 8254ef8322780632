// docs/dsh-users.md quotes the YAML the end-to-end run uses; this keeps them the same text.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { HMR_PATCH } from '../src/dsh-cli.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const doc = readFileSync(join(root, 'docs', 'dsh-users.md'), 'utf8')
const yamlBlocks = [...doc.matchAll(/```yaml\n([^]*?)```/g)].map((m) => m[1])
const fixture = (name: string) => readFileSync(fileURLToPath(new URL(`fixtures/${name}`, import.meta.url)), 'utf8')

describe('docs/dsh-users.md', () => {
  it.each([
    ['profile.cordis.patch.yml', fixture('profile.cordis.patch.yml')],
    ['preset.agent.cordis.yml', fixture('preset.agent.cordis.yml')],
    ['disable-read.cordis.patch.yml', fixture('disable-read.cordis.patch.yml')],
    ['the hmr patch npm start writes', HMR_PATCH],
    ['tool-bash-bg/cordis.patch.yml', readFileSync(join(root, 'packages', 'tool-bash-bg', 'cordis.patch.yml'), 'utf8')],
  ])('quotes %s exactly, as a yaml block', (_name, text) => {
    expect(yamlBlocks).toContain(text)
  })

  it('has no other yaml block (every quoted YAML is one the tests run)', () => {
    expect(yamlBlocks).toHaveLength(5)
  })
})

describe('package READMEs', () => {
  // The house limit: a README a user reads through, not a history.
  it.each(['tool-list-dir', 'tool-read', 'tool-bash-bg', 'tool-kill-shell'])('%s/README.md is at most 1,500 words', (pkg) => {
    const words = readFileSync(join(root, 'packages', pkg, 'README.md'), 'utf8').split(/\s+/).filter((word) => word !== '').length
    expect(words).toBeLessThanOrEqual(1500)
  })
})
