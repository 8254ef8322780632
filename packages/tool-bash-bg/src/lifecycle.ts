// The plugin's life: one local host (its directory, cgroups, leftovers and exit hook) and one shell registry, made at
// apply and disposed with the plugin, so a reload leaves one of each.
import type { Context } from '@deepseek-ai/cordis'
import type { Config } from './config.ts'
import { LocalHost } from './local/host.ts'
import { Ledger, ledgerRoot } from './local/ledger.ts'
import { hostJobsOf } from './shells/jobs-adapter.ts'
import { KILL_POLICY } from './shells/kill-policy.ts'
import { ShellRegistry } from './shells/registry.ts'
import type { WorldParts } from './shells/world.ts'

export function startShells(ctx: Context, config: Config): { registry: ShellRegistry, worlds: WorldParts } {
  const { toolName } = config
  const local = new LocalHost(toolName, KILL_POLICY)
  const ledger = new Ledger(ledgerRoot())
  // Bounded at each start, off the boot path (LEDGER_LIMITS).
  setImmediate(() => {
    try {
      ledger.prune()
    } catch {}
  }).unref()
  const registry = new ShellRegistry({
    toolName,
    host: local.dir,
    keepFinishedMs: config.keepFinishedMs,
    maxLogBytes: config.maxLogBytes,
    readLimit: config.maxOutputBytes,
    jobs: () => hostJobsOf(ctx.get('jobs')),
    jobKill: () => ctx.get('tools')?.get('job_kill') === undefined ? undefined : 'job_kill',
    keepOnExit: config.keepOnExit,
    orphanTtlMs: config.orphanTtlMs,
    ledger,
  })
  // Hosts of other PID namespaces are judged by their socket, off the boot path.
  const reaped = local.reap()
  registry.noteLeftovers(reaped.now)
  void reaped.later.then((stopped) => registry.noteLeftovers(stopped), () => {})
  local.guardExit(() => registry.atExit())
  ctx.effect(() => async () => {
    // The kills wait on unref'd timers: hold the event loop until they are done, or a host with nothing else to do exits mid-dispose.
    const hold = setInterval(() => {}, 60_000)
    let keep: Set<string> | undefined
    try {
      if (config.keepOnExit) keep = await registry.keepAtDispose()
      else await registry.terminateAll()
    } finally {
      clearInterval(hold)
    }
    local.dispose(keep)
  }, 'tool-bash-bg shells')
  const worlds = {
    local, runs: registry.foreground, toolName, maxLogBytes: config.maxLogBytes, stopGraceMs: () => registry.defaultKill().timeoutMs,
  }
  return { registry, worlds }
}
