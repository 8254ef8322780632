// The tool-read plugin: the read_file tool, its guidance and its outside-workspace gate.
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-fs'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-attachment'
import type {} from '@gencode-ai/dsh-tool-bash-bg'
import { OutsideGate } from '@gencode-ai/dsh-tool-common'
import { Config } from './config.ts'
import { readFileTool } from './tool.ts'

export const name = 'tool-read'

export const inject = ['tools', 'fs', 'systemPrompt']

export { Config }

export function apply(ctx: Context, config: Config): void {
  if (config.guidance !== '') {
    ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  }
  // bash_bg's logs (a shell's output_file) count as inside: read through its declared contract when it is composed.
  const logDir = () => ctx.get('backgroundShells')?.logDir
  const gate = new OutsideGate(ctx, config.toolName, config.outsideWorkspace, { name: 'file_path', instead: 'read a file inside the workspace' }, logDir)
  gate.listen()
  ctx.tools.register(readFileTool(ctx, config, gate))
}
