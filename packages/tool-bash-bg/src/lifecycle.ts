/**
 * The registry's lifetime, tied to the plugin's: a private log directory (with its crash record,
 * after stopping what dead hosts left running), the exit guard (kill
 * every shell when the host process ends) and the dispose effect (kill every shell, wait, remove
 * the logs).
 */
import type { Context } from '@deepseek-ai/cordis'
import { installExitGuard } from './exit-guard.ts'
import { openHostDir, reapLeftovers } from './leftovers.ts'
import { ShellRegistry } from './registry.ts'

/** A registry that lives and dies with `ctx`'s fiber. */
export function startRegistry(ctx: Context): ShellRegistry {
  const host = openHostDir()
  const registry = new ShellRegistry(host)
  const stopped = reapLeftovers(host)
  if (stopped > 0) registry.leftoverNotice = `Stopped ${stopped} shell${stopped === 1 ? '' : 's'} left by a host that exited without cleanup`
  const uninstallGuard = installExitGuard(() => {
    registry.terminateAllSync(250)
    host.remove()
  })
  ctx.effect(() => async () => {
    uninstallGuard()
    await registry.terminateAll(registry.defaultKill)
    host.remove()
  }, 'tool-bash-bg shells')
  return registry
}
