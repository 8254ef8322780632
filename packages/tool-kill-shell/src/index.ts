import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import type {} from '@gencode-ai/dsh-tool-bash-bg'
import { checkConfig, Config } from './config.ts'
import { killShellTool } from './tool.ts'

export const name = 'tool-kill-shell'
/** Without tool-bash-bg's `backgroundShells` in the composition this plugin is never applied. */
export const inject = ['tools', 'systemPrompt', 'backgroundShells']
export { Config }

export function apply(ctx: Context, config: Config): void {
  checkConfig(config)
  if (config.guidance !== '') {
    ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  }
  ctx.tools.register(killShellTool(ctx, config))
}
