// What each tool adds to the model's prompt, measured on real compositions in DeepSeek V3 tokens.
import { pathToFileURL } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import { renderPrompt } from '@deepseek-ai/dsh-system-prompt'
import LocalBashExecutor from '@deepseek-ai/dsh-bash-local'
import LocalSubprocessRuntime from '@deepseek-ai/dsh-subprocess-local'
import * as ToolFs from '@deepseek-ai/dsh-tool-fs'
import * as ToolBash from '@deepseek-ai/dsh-tool-bash'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { countTokens } from '@gencode-ai/testkit'
import { discoverPlugins } from './plugins.ts'
import { bootHostServices } from './services.ts'

type PluginModule = Parameters<Context['plugin']>[0]

/** What one composition adds to the model's prompt, in DeepSeek V3 tokens. */
export interface PromptCost {
  /** The tool name measured. */
  tool: string
  /** Tokens of the tool's schema JSON ({name, description, parameters}) as ctx.tools.schemas() gives it. */
  schema: number
  /** Tokens the plugin adds to the rendered system prompt (its guidance section, with separators). */
  guidance: number
  total: number
}

/** The services every measured composition stands on; no tool registers here. */
async function bootBase(): Promise<Context> {
  const ctx = await bootHostServices(process.cwd())
  await ctx.plugin(LocalSubprocessRuntime)
  await ctx.plugin(LocalBashExecutor, {})
  return ctx
}

async function snapshot(ctx: Context): Promise<{ prompt: string, schemas: Map<string, string> }> {
  const assembly = await ctx.systemPrompt.assemble()
  return {
    prompt: renderPrompt(assembly),
    schemas: new Map(ctx.tools.schemas().map(({ name, description, parameters }) => {
      return [name, JSON.stringify({ name, description, parameters })]
    })),
  }
}

/**
 * Measure what loading `plugins` (in order, default config) adds for `tool`: the tool's schema
 * JSON, its own guidance section, and the rest of the rendered system prompt's growth (guidance
 * the plugins share between several tools, as the first-party jobs suite does).
 */
async function measure(plugins: readonly PluginModule[], tool: string): Promise<{ cost: PromptCost, sharedGuidance: number }> {
  const ctx = await bootBase()
  try {
    const before = await snapshot(ctx)
    for (const mod of plugins) await ctx.plugin(mod, {})
    const after = await snapshot(ctx)
    const schema = after.schemas.get(tool)
    if (schema === undefined) throw new Error(`tool ${tool} is not registered by the measured plugins (have: ${[...after.schemas.keys()].join(', ')})`)
    const own = (await ctx.systemPrompt.assemble()).sections.find((s) => s.name === `tool:${tool}`)
    const guidance = typeof own?.text === 'string' ? countTokens(own.text) : 0
    const schemaTokens = countTokens(schema)
    const growth = countTokens(after.prompt) - countTokens(before.prompt)
    const cost = { tool, schema: schemaTokens, guidance, total: schemaTokens + guidance }
    return { cost, sharedGuidance: Math.max(0, growth - guidance) }
  } finally {
    await ctx.fiber.dispose()
  }
}

/** Our four tools, each measured alone (kill-shell over bash-bg, which it needs). */
export async function measureOurs(root: string): Promise<PromptCost[]> {
  const entries = new Map(discoverPlugins(root).filter((p) => p.built).map((p) => [p.name, p.entry]))
  const out: PromptCost[] = []
  const cases: [string[], string][] = [
    [['@gencode-ai/dsh-tool-list-dir'], 'list_directory'],
    [['@gencode-ai/dsh-tool-read'], 'read_file'],
    [['@gencode-ai/dsh-tool-bash-bg'], 'bash_bg'],
    [['@gencode-ai/dsh-tool-bash-bg', '@gencode-ai/dsh-tool-kill-shell'], 'kill_shell'],
  ]
  for (const [names, tool] of cases) {
    const files = names.map((name) => entries.get(name))
    if (files.includes(undefined)) continue
    const mods = await Promise.all(files.map(async (file) => await import(pathToFileURL(String(file)).href) as PluginModule))
    out.push((await measure(mods, tool)).cost)
  }
  return out
}

/** The first-party baseline: read (dsh-tool-fs), bash (dsh-tool-bash), job_kill (dsh-tool-jobs). */
export async function measureFirstParty(): Promise<{ costs: PromptCost[], jobsSharedGuidance: number }> {
  const read = await measure([ToolFs], 'read')
  const bash = await measure([ToolBash], 'bash')
  const jobs = await measure([ToolJobs], 'job_kill')
  return { costs: [read.cost, bash.cost, jobs.cost], jobsSharedGuidance: jobs.sharedGuidance }
}

/** The recorded figure: the number in a `Prompt cost: N tokens` line of a package README. */
export function recordedCost(readme: string): number | undefined {
  const match = /Prompt cost:\**\s*(\d+)\s+tokens/.exec(readme)
  return match ? Number(match[1]) : undefined
}
