// bootServices: the real DSH host services, in the order the harness boots them, with no tool and no model.
import './polyfill.ts'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@deepseek-ai/dsh-llm'
import SessionStore from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import SandboxedFileSystem from '@deepseek-ai/dsh-fs-sandbox'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import type { SandboxMode } from '@deepseek-ai/dsh-sandbox'
import LocalJobRegistry from '@deepseek-ai/dsh-jobs-local'
import { FilePersistence } from './persistence.ts'

export interface ServicesOptions {
  /** The filesystem provider's default cwd. */
  cwd: string
  /**
   * Compose the product's sandboxing filesystem (dsh-sandbox-policy + dsh-fs-sandbox, as the dsh
   * base bundle does) instead of the plain local one; the policy's workspace root is `cwd`.
   */
  sandbox?: SandboxMode
  /** Mount this provider (a subclass of the local one, e.g. a stand-in for a remote provider) in place of dsh-fs-local. */
  fileSystem?: typeof LocalFileSystem
  /** Mount dsh-jobs-local as ctx.jobs (default true); false leaves the slot to a test's own registry. */
  jobRegistry?: boolean
  /** Persist sessions as JSON lines under this directory (ctx.sessionPersistence), so a later host can resume them. */
  persistence?: string
}

/**
 * The real DSH host services, booted in the order the harness's own test kit uses: llm runtime,
 * session store, system prompt, tool runtime, agent registry, the agent loop, a filesystem
 * provider and the local job registry. No model and no tool registers here. The tests and the
 * main job (the tool console, the prompt-cost measurement) both stand on this one boot.
 */
export async function bootServices(options: ServicesOptions): Promise<Context> {
  const { cwd } = options
  const ctx = new Context()
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(SessionStore)
  if (options.persistence !== undefined) await ctx.plugin(FilePersistence, { root: options.persistence })
  await ctx.plugin(SystemPrompt, { persona: '' })
  await ctx.plugin(ToolRuntime, {})
  await ctx.plugin(AgentRegistry)
  await ctx.plugin(AgentLoop, { agents: [] })
  if (options.fileSystem !== undefined) {
    await ctx.plugin(options.fileSystem, { cwd })
  } else if (options.sandbox === undefined) {
    await ctx.plugin(LocalFileSystem, { cwd })
  } else {
    await ctx.plugin(SandboxPolicy, { mode: options.sandbox, workspaceRoot: cwd })
    await ctx.plugin(SandboxedFileSystem, { cwd })
  }
  if (options.jobRegistry !== false) await ctx.plugin(LocalJobRegistry)
  return ctx
}
