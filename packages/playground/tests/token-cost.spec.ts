// A tool's prompt cost is paid on every request: it may not grow by more than 10% over the
// figure its README records ("Prompt cost: N tokens" in its Token effect section).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { countTokens } from '@gencode-ai/testkit'
import { measureFirstParty, measureOurs, recordedCost } from '../src/token-cost.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const FOLDER: Record<string, string> = {
  list_directory: 'tool-list-dir',
  read_file: 'tool-read',
  bash_bg: 'tool-bash-bg',
  kill_shell: 'tool-kill-shell',
}

describe('prompt cost per tool (DeepSeek V3 tokenizer)', () => {
  it('the tokenizer counts offline, as DeepSeek V3 does', () => {
    expect(countTokens('')).toBe(0)
    expect(countTokens('hello world')).toBe(2)
  })

  it('reads the recorded figure from a README line', () => {
    expect(recordedCost('- **Token effect**: Prompt cost: 247 tokens (schema 205)')).toBe(247)
    expect(recordedCost('Prompt cost: **12** tokens')).toBeUndefined()
    expect(recordedCost('no figure here')).toBeUndefined()
  })

  it('reproduces the first-party baseline (root README, Measured) (read 137, bash 432, job_kill 97 + 82)', async () => {
    const { costs, jobsSharedGuidance } = await measureFirstParty()
    expect(costs.map((c) => [c.tool, c.total])).toEqual([['read', 137], ['bash', 432], ['job_kill', 97]])
    expect(jobsSharedGuidance).toBe(82)
  })

  it('no tool costs more than 10% over its README figure', async () => {
    const costs = await measureOurs(root)
    expect(costs.map((c) => c.tool).sort()).toEqual(Object.keys(FOLDER).sort())
    for (const cost of costs) {
      const readme = readFileSync(join(root, 'packages', FOLDER[cost.tool]!, 'README.md'), 'utf8')
      const recorded = recordedCost(readme)
      expect(recorded, `${FOLDER[cost.tool]}/README.md needs a "Prompt cost: N tokens" line (measured ${cost.total})`).toBeDefined()
      expect(cost.total, `${cost.tool} costs ${cost.total} tokens, over 110% of the recorded ${recorded}`).toBeLessThanOrEqual(Math.floor(recorded! * 1.1))
    }
  })
})
