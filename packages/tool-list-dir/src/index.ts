import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-fs'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { Config } from './config.ts'
import { listDirectoryTool } from './tool.ts'
import { gateOutsideWorkspace } from './workspace.ts'

export const name = 'tool-list-dir'

export const inject = ['tools', 'fs', 'systemPrompt']

export { Config }

export function apply(ctx: Context, config: Config): void {
  if (config.guidance !== '') {
    ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  }
  gateOutsideWorkspace(ctx, config.toolName, config.outsideWorkspace)
  ctx.tools.register(listDirectoryTool(ctx, config))
}
