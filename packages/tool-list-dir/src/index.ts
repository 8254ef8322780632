// The tool-list-dir plugin: the list_directory tool, its guidance and its outside-workspace gate.
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@gencode-ai/dsh-tool-bash-bg'
import { OutsideGate } from '@gencode-ai/dsh-tool-common'
import { Config } from './config.ts'
import { listDirectoryTool } from './tool.ts'

export const name = 'tool-list-dir'

export const inject = ['tools', 'fs', 'systemPrompt']

export { Config }

export function apply(ctx: Context, config: Config): void {
  if (config.guidance !== '') ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  // bash_bg's logs count as inside: read through its declared contract when it is composed.
  const logDir = () => ctx.get('backgroundShells')?.logDir
  const gate = new OutsideGate(ctx, config.toolName, config.outsideWorkspace, { name: 'path', instead: 'list a path inside the workspace' }, logDir)
  gate.listen()
  ctx.tools.register(listDirectoryTool(ctx, config, gate))
}
