import './polyfill.ts'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@deepseek-ai/dsh-llm'
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import LocalJobRegistry from '@deepseek-ai/dsh-jobs-local'
import SandboxedFileSystem from '@deepseek-ai/dsh-fs-sandbox'
import SandboxPolicy from '@deepseek-ai/dsh-sandbox-policy'
import type { SandboxMode } from '@deepseek-ai/dsh-sandbox'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { ScriptedAdapter, type ScriptEntry } from './scripted-adapter.ts'
import { makeTmpDir, removeTmpDir } from './tmp.ts'

export interface HostOptions {
  /** The fs provider's default cwd; a fresh temp dir when omitted. */
  cwd?: string
  /** The scripted model's turns; the agent loop is always mounted. */
  script?: ScriptEntry[]
  /** Whether the scripted model's route declares image input. */
  imageInput?: boolean
  /**
   * Compose the product's sandboxing filesystem (dsh-sandbox-policy + dsh-fs-sandbox, as the dsh
   * base bundle does) instead of the plain local one; the policy's workspace root is `cwd`.
   */
  sandbox?: SandboxMode
}

export interface Host {
  ctx: Context
  /** The provider's default cwd (a real temp dir unless given). */
  cwd: string
  adapter: ScriptedAdapter
  /** Create an agent whose session cwd is `cwd` (default: the host cwd). */
  agent(sessionCwd?: string, id?: string): Agent
  dispose(): Promise<void>
}

let agentSeq = 0

/**
 * Boot the real DSH host services, in the order the harness's own test kit uses: llm runtime,
 * session store, system prompt, tool runtime, agent registry, the agent loop, then the local
 * filesystem and the local job registry. Only the model is scripted.
 */
export async function bootHost(options: HostOptions = {}): Promise<Host> {
  const ownCwd = options.cwd === undefined
  const cwd = options.cwd ?? await makeTmpDir()
  const ctx = new Context()
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(SessionStore)
  await ctx.plugin(SystemPrompt, { persona: '' })
  await ctx.plugin(ToolRuntime, {})
  await ctx.plugin(AgentRegistry)
  await ctx.plugin(AgentLoop, { agents: [] })
  if (options.sandbox === undefined) {
    await ctx.plugin(LocalFileSystem, { cwd })
  } else {
    await ctx.plugin(SandboxPolicy, { mode: options.sandbox, workspaceRoot: cwd })
    await ctx.plugin(SandboxedFileSystem, { cwd })
  }
  await ctx.plugin(LocalJobRegistry)
  const adapter = new ScriptedAdapter(options.script ?? [], options.imageInput ?? false)
  ctx.llm.registerAdapter(['mock'], adapter)
  return {
    ctx,
    cwd,
    adapter,
    agent(sessionCwd = cwd, id = `s${++agentSeq}`) {
      return ctx.agentLoop.create(SessionId(id), { provider: 'mock', model: 'mock' }, { cwd: sessionCwd })
    },
    async dispose() {
      await ctx.fiber.dispose()
      if (ownCwd) await removeTmpDir(cwd)
    },
  }
}
