import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { checkConfig, Config as ConfigSchema, type Config as BashBgConfig } from './config.ts'
import { startRegistry } from './lifecycle.ts'
import { provideTasksCommand } from './tasks.ts'
import { createTool } from './tool.ts'

export type { BackgroundShellRegistry, KillOutcome, KillRequest, KillSignal, ShellRecord, ShellStatus } from './registry-types.ts'

export const name = 'tool-bash-bg'
export const inject = ['tools', 'systemPrompt']

export type Config = BashBgConfig
export const Config = ConfigSchema

export function apply(ctx: Context, config: Config): void {
  checkConfig(config)
  const registry = startRegistry(ctx)
  ctx.provide('backgroundShells', registry)
  if (config.guidance !== '') ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  ctx.tools.register(createTool(ctx, config, registry))
  provideTasksCommand(ctx, registry)
}
