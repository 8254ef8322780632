// The tool-kill-shell plugin: the kill_shell tool and its guidance, on tool-bash-bg's shell registry.
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
  // bash_bg points the model at this tool (by its configured name), and a bare host job_kill
  // waits this plugin's default timeout before SIGKILL, as kill_shell does.
  ctx.effect(() => ctx.backgroundShells.attachStopper({
    toolName: config.toolName,
    defaultKill: { signal: 'SIGTERM', force: true, timeoutMs: config.timeoutMs },
  }), `${config.toolName} on the shell registry`)
  if (config.guidance !== '') {
    ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  }
  ctx.tools.register(killShellTool(ctx, config))
}
