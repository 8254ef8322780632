// The registry lives and dies with the plugin; on exit, SIGTERM and SIGINT every shell is killed synchronously,
// and the signal re-raised only when no other listener handles it (a host that traps SIGINT keeps its behaviour).
import type { Context } from '@deepseek-ai/cordis'
import { closeShellCgroups, pruneShellCgroups } from './local/cgroup.ts'
import { hostJobsOf } from './shells/jobs-adapter.ts'
import { openHostDir, reapBySocket, reapLeftovers } from './local/leftovers.ts'
import { ShellRegistry } from './shells/registry.ts'

const SIGNALS = ['SIGTERM', 'SIGINT'] as const
/** Tags our listeners across module copies (HMR loads a fresh copy of this file). */
const OURS = Symbol.for('@gencode-ai/dsh-tool-bash-bg/exit-guard')

type Tagged = ((signal: NodeJS.Signals) => void) & { [OURS]?: true }

export function startRegistry(ctx: Context, keepFinishedMs: number): ShellRegistry {
  const host = openHostDir()
  const registry = new ShellRegistry({ host, keepFinishedMs, jobs: () => hostJobsOf(ctx.get('jobs')) })
  registry.noteLeftovers(reapLeftovers(host))
  // Hosts of other PID namespaces: proven dead by their socket, off the boot path.
  void reapBySocket(host).then((stopped) => registry.noteLeftovers(stopped), () => {})
  let done = false
  const onExit: Tagged = () => {
    if (done) return
    done = true
    registry.terminateAllSync(250)
    // What no shell record covers (a foreground run under way) goes with its cgroup.
    closeShellCgroups(250)
    host.remove()
  }
  const onSignal: Tagged = (signal: NodeJS.Signals) => {
    if (process.listeners(signal).some((listener) => (listener as Tagged)[OURS] !== true)) return
    onExit(signal)
    uninstall()
    // The last of our guards restores the default action: the process ends by this signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  onExit[OURS] = true
  onSignal[OURS] = true
  process.on('exit', onExit)
  for (const signal of SIGNALS) process.on(signal, onSignal)
  function uninstall() {
    process.off('exit', onExit)
    for (const signal of SIGNALS) process.off(signal, onSignal)
  }
  ctx.effect(() => async () => {
    uninstall()
    // The kills wait on unref'd timers: hold the event loop until they are done, or a host with nothing else to do exits mid-dispose.
    const hold = setInterval(() => {}, 60_000)
    try {
      await registry.terminateAll()
      pruneShellCgroups()
    } finally {
      clearInterval(hold)
    }
    host.remove()
  }, 'tool-bash-bg shells')
  return registry
}
