/**
 * The registry's lifetime, tied to the plugin's: a private log directory, the exit guard (kill
 * every shell when the host process ends) and the dispose effect (kill every shell, wait, remove
 * the logs).
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { installExitGuard } from './exit-guard.ts'
import { ShellRegistry } from './registry.ts'

/** A registry that lives and dies with `ctx`'s fiber. */
export function startRegistry(ctx: Context): ShellRegistry {
  // Private per plugin instance: mkdtemp creates it 0700, outside any workspace.
  const logDir = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bash-bg-')))
  const registry = new ShellRegistry(logDir)
  const uninstallGuard = installExitGuard(() => {
    registry.terminateAllSync(250)
    rmSync(logDir, { recursive: true, force: true })
  })
  ctx.effect(() => async () => {
    uninstallGuard()
    await registry.terminateAll(registry.defaultKill)
    rmSync(logDir, { recursive: true, force: true })
  }, 'tool-bash-bg shells')
  return registry
}
