// Prompt cost per tool, in DeepSeek V3 tokens: the tool's schema JSON (name, description,
// parameters, as ctx.tools.schemas() gives it) plus its guidance section (as
// ctx.systemPrompt.assemble() + renderPrompt() render it), each tool measured alone on the
// real host services; the first-party read / bash / job_kill measured the same way.
// Usage: node scripts/token-cost.mjs   (after npm run build)
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measureFirstParty, measureOurs } from '../packages/playground/dist/token-cost.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const ours = await measureOurs(root)
const { costs: firstParty, jobsSharedGuidance } = await measureFirstParty()
const row = (who, c) => `| ${who} | \`${c.tool}\` | ${c.schema} | ${c.guidance} | ${c.total} |`
console.log('| plugin | tool | schema JSON | guidance | total |')
console.log('|---|---|---:|---:|---:|')
for (const c of firstParty) console.log(row('first-party', c))
for (const c of ours) console.log(row('ours', c))
console.log(`\nfirst-party jobs guidance shared by job_list/job_output/job_kill: ${jobsSharedGuidance} tokens`)
