import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { Config as ConfigSchema, type Config as BashBgConfig } from './config.ts'
import { installExitGuard } from './exit-guard.ts'
import { ShellRegistry } from './registry.ts'
import { provideTasksCommand } from './tasks.ts'
import { DEFAULT_KILL } from './terminate.ts'
import { createTool } from './tool.ts'

export type { BackgroundShellRegistry, KillOutcome, KillRequest, KillSignal, ShellRecord, ShellStatus } from './registry-types.ts'

export const name = 'tool-bash-bg'
export const inject = ['tools', 'systemPrompt']

export type Config = BashBgConfig
export const Config = ConfigSchema

export function apply(ctx: Context, config: Config): void {
  if (config.timeoutMs > config.maxTimeoutMs) {
    throw new HarnessError(`tool-bash-bg: timeoutMs (${config.timeoutMs}) exceeds maxTimeoutMs (${config.maxTimeoutMs}) — raise maxTimeoutMs or lower timeoutMs`, 'INVALID_CONFIG')
  }
  // Private per plugin instance: mkdtemp creates it 0700, outside any workspace.
  const logDir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bash-bg-')))
  const registry = new ShellRegistry(logDir)
  const uninstallGuard = installExitGuard(() => {
    registry.terminateAllSync(250)
    rmSync(logDir, { recursive: true, force: true })
  })
  ctx.effect(() => async () => {
    uninstallGuard()
    await registry.terminateAll(DEFAULT_KILL)
    rmSync(logDir, { recursive: true, force: true })
  }, 'tool-bash-bg shells')
  ctx.provide('backgroundShells', registry)
  if (config.guidance !== '') ctx.systemPrompt.section({ name: `tool:${config.toolName}`, order: config.order, text: config.guidance })
  ctx.tools.register(createTool(ctx, config, registry))
  provideTasksCommand(ctx, registry)
}
