import './polyfill.ts'
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@deepseek-ai/dsh-llm'
import SessionStore from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import AgentRegistry from '@deepseek-ai/dsh-agent'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import LocalJobRegistry from '@deepseek-ai/dsh-jobs-local'
import * as ShellEnv from '@deepseek-ai/dsh-shell-env'
import Commands from '@deepseek-ai/dsh-commands'

/**
 * The real host services both the console and the prompt-cost measurement stand on (the test
 * kit's set, plus the shell environment and the command registry); no tool registers here.
 * `cwd` is the filesystem provider's default cwd.
 */
export async function bootHostServices(cwd: string): Promise<Context> {
  const ctx = new Context()
  await ctx.plugin(LlmRuntime)
  await ctx.plugin(SessionStore)
  await ctx.plugin(SystemPrompt, { persona: '' })
  await ctx.plugin(ToolRuntime, {})
  await ctx.plugin(AgentRegistry)
  await ctx.plugin(LocalFileSystem, { cwd })
  await ctx.plugin(LocalJobRegistry)
  await ctx.plugin(ShellEnv, {})
  await ctx.plugin(Commands)
  return ctx
}
