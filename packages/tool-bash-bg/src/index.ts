// The tool-bash-bg plugin: the shell registry service, the bash_bg tool, its guidance and /tasks.
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { checkConfig, Config, guidanceOf } from './config.ts'
import { startShells } from './lifecycle.ts'
import { provideTasksCommand } from './tool/tasks.ts'
import { createTool } from './tool/tool.ts'

export type { BackgroundShells, Caller, KillOutcome, KillRequest, KillSignal, ShellSnapshot, ShellStatus, StopOutcome, StopperOptions } from './contract.ts'
export { Config }

export const name = 'tool-bash-bg'
export const inject = ['tools', 'systemPrompt'] as const

export function apply(ctx: Context, config: Config): void {
  checkConfig(config)
  const { registry, worlds, delivery } = startShells(ctx, config)
  ctx.provide('backgroundShells', registry)
  if (config.guidance !== '') ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: guidanceOf(config) })
  ctx.tools.register(createTool(ctx, config, registry, worlds, delivery))
  provideTasksCommand(ctx, registry)
}
