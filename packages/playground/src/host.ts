// The console's host: the real services, no model, and every built plugin loaded.
import { pathToFileURL } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import { CallId, LlmAdapter, type GenerateOptions, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { ToolExecutionResult } from '@deepseek-ai/dsh-tools'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type {} from '@deepseek-ai/dsh-agent-loop'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import * as FsObservationPolicy from '@deepseek-ai/dsh-fs-observation-policy'
import { loadablePlugins, type PluginPackage } from './plugins.ts'
import { bootHostServices } from './services.ts'

/** The console has no model: a turn is never started, so this adapter only says so if asked. */
class NoModel extends LlmAdapter {
  // eslint-disable-next-line require-yield
  async * stream(_options: GenerateOptions): AsyncIterable<StreamChunk> {
    throw new Error('the tool console has no model — set DEEPSEEK_API_KEY to run the dsh CLI')
  }
}

export interface ConsoleHost {
  ctx: Context
  /** The console's one agent: tool calls run as its calls (ownership, jobs, workspace). */
  agent: Agent
  loaded: PluginPackage[]
  skipped: { pkg: PluginPackage, reason: string }[]
  call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolExecutionResult>
  dispose(): Promise<void>
}

let callSeq = 0

/**
 * Boot the real DSH services the tests use (packages/testkit's boot), plus the host's shell
 * environment, command registry, job tools and read-before-edit policy, then load each built
 * plugin package with its default config. `cwd` is the workspace: the fs provider's default
 * cwd and the console agent's session cwd, so relative paths resolve against it.
 */
export async function bootConsoleHost(cwd: string, plugins: readonly PluginPackage[]): Promise<ConsoleHost> {
  const ctx = await bootHostServices(cwd)
  // `quiet`: a finished background shell must not open a model turn the console cannot serve.
  await ctx.plugin(ToolJobs, { completionDelivery: 'quiet' })
  await ctx.plugin(FsObservationPolicy)
  ctx.llm.registerAdapter(['console'], new NoModel())

  const { ok, skipped } = loadablePlugins(plugins)
  const loaded: PluginPackage[] = []
  for (const pkg of ok) {
    try {
      const mod = await import(pathToFileURL(pkg.entry).href) as Parameters<Context['plugin']>[0]
      await ctx.plugin(mod, {})
      loaded.push(pkg)
    } catch (error) {
      skipped.push({ pkg, reason: `failed to load: ${error instanceof Error ? error.message : String(error)}` })
    }
  }

  const agent = ctx.agentLoop.create(SessionId(`console-${process.pid}`), { provider: 'console', model: 'console' }, { cwd })
  return {
    ctx,
    agent,
    loaded,
    skipped,
    call(name, args, signal = new AbortController().signal) {
      return ctx.tools.execute({ callId: CallId(`console-${++callSeq}`), name, arguments: args, signal, agent })
    },
    async dispose() {
      await ctx.fiber.dispose()
    },
  }
}
