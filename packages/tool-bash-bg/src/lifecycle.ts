// The plugin's life: one local host (its directory, cgroups, leftovers and exit hook) and one shell registry, made at
// apply and disposed with the plugin, so a reload leaves one of each.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import type { Config } from './config.ts'
import { LocalHost } from './local/host.ts'
import { Ledger, ledgerRoot } from './local/ledger.ts'
import { SessionClaims } from './local/session-claim.ts'
import { takeBack } from './local/taken-back.ts'
import { Completions } from './shells/completions.ts'
import { NoticeDelivery } from './shells/delivery.ts'
import { hostJobsOf } from './shells/jobs-adapter.ts'
import { KILL_POLICY } from './shells/kill-policy.ts'
import { ShellRegistry } from './shells/registry.ts'
import { TakeBack } from './shells/take-back.ts'
import { localWorld, type WorldParts } from './shells/world.ts'

/** Completion notices that may wake an idle agent per user turn (tool-jobs' own default). */
const MAX_WAKES = 3

/** Whether a cgroup (v2 `cgroup.events`, else v1 `cgroup.procs`) still holds a process. */
function cgroupPopulated(dir: string): boolean {
  try {
    return /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))
  } catch {
    try {
      return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() !== ''
    } catch {
      return false
    }
  }
}

export function startShells(ctx: Context, config: Config): { registry: ShellRegistry, worlds: WorldParts, delivery: NoticeDelivery } {
  const { toolName } = config
  const local = new LocalHost(toolName, KILL_POLICY)
  const ledger = new Ledger(ledgerRoot())
  // Bounded at each start, off the boot path (LEDGER_LIMITS).
  setImmediate(() => {
    try {
      ledger.prune()
    } catch {}
  }).unref()
  const claims = new SessionClaims(
    { pid: process.pid, start: local.census.startTime(process.pid) ?? 0, pidns: local.dir.pidns, host: local.dir.name },
    (pid) => local.census.startTime(pid),
  )
  // The directory is made (0700) and checked ours first: another user's is never claimed.
  const claim = (session: string) => ledger.problem(session) === undefined && claims.take(ledger.dirOf(session))
  const delivery = new NoticeDelivery(ctx, { ledger: () => ledger, maxWakes: MAX_WAKES, plugin: 'tool-bash-bg' })
  const completions = new Completions({
    ledger: () => ledger, delivery, agentOf: (session) => ctx.get('agents')?.get(session as SessionId),
  })
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
    lettingGo: () => local.keeper.disconnect(),
    started: (owner) => { claim(owner) },
    completed: (shell, cause) => completions.settled(shell, cause),
  })
  new TakeBack({
    ledger: () => ledger, delivery, pidns: local.dir.pidns,
    startTime: (pid) => local.census.startTime(pid),
    cgroupPopulated,
    claim,
    known: (shellId) => registry.has(shellId),
    underWay: (session, gate) => registry.takingBack(session, gate),
    adopt: async (agent, record) => {
      const started = await takeBack(record, config.maxLogBytes, { census: local.census, sys: local.sys, stop: KILL_POLICY })
      if (started === undefined) return undefined
      const shell = registry.adopt({ record, caller: agent, started, world: localWorld(local, registry.foreground) })
      return { bytes: shell.snapshot().bytes }
    },
  }).listen(ctx)
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
      // Whatever stopping or keeping threw, the claims go and the keeper hears its host leave: a keeper never told keeps
      // waiting for a host that is gone to record its shells' ends.
      try {
        claims.release()
      } finally {
        local.dispose(keep)
      }
    }
  }, 'tool-bash-bg shells')
  const worlds = {
    local, runs: registry.foreground, toolName, maxLogBytes: config.maxLogBytes, stopGraceMs: () => registry.defaultKill().timeoutMs,
  }
  return { registry, worlds, delivery }
}
