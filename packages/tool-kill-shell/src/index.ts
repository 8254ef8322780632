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
  // A bare host job_kill waits this plugin's default timeout before SIGKILL, as kill_shell does.
  ctx.effect(() => {
    const registry = ctx.backgroundShells
    const previous = registry.defaultKill
    registry.defaultKill = { signal: 'SIGTERM', force: true, timeoutMs: config.timeoutMs }
    return () => { registry.defaultKill = previous }
  }, 'kill_shell default for job_kill')
  if (config.guidance !== '') {
    ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  }
  ctx.tools.register(killShellTool(ctx, config))
}
