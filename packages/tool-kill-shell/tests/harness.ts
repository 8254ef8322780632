/** Shared setup for this package's specs: the real host with bash_bg AND kill_shell, and /proc probes. */
import { readdirSync, readFileSync } from 'node:fs'
import type { Agent } from '@deepseek-ai/dsh-agent'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { bootHost, execTool, textOf, type Host, type HostOptions } from '@gencode-ai/testkit'
// bash-bg is a sibling workspace package; its source is loaded directly (its dist is a build product).
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import type { Caller, ShellSnapshot } from '../../tool-bash-bg/src/contract.ts'
// The class, for its bash-bg-internal reads (running, defaultKill, stopTool) beside the service contract.
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import * as KillShell from '../src/index.ts'

export interface KsHost extends Host {
  shells: ShellRegistry
}

export interface KsOptions extends HostOptions {
  /** Mount the real dsh-tool-jobs (the job controller), so agent-owned shells are host jobs. */
  jobs?: boolean
  killShell?: Partial<KillShell.Config>
  bashBg?: Partial<BashBg.Config>
  /** Mount more host services (a sandbox, say) before the plugins. */
  before?: (host: Host) => Promise<void>
}

export async function bootKs(options: KsOptions = {}): Promise<KsHost> {
  const host = await bootHost(options)
  await options.before?.(host)
  if (options.jobs === true) await host.ctx.plugin(ToolJobs, {})
  await host.ctx.plugin(BashBg, options.bashBg ?? {})
  await host.ctx.plugin(KillShell, options.killShell ?? {})
  return Object.assign(host, { shells: host.ctx.get('backgroundShells') as ShellRegistry })
}

export interface Bg { shell_id: string, pid: number, output_file: string, job_id?: string }

/** Start a background shell through the real bash_bg tool. */
export async function startBg(host: Host, command: string, agent?: Agent): Promise<Bg> {
  const result = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true }, agent ? { agent } : {})
  if (result.isError) throw new Error(textOf(result))
  return result.value as unknown as Bg
}

interface Stat { state: string, ppid: number, pgrp: number }

export function statOf(pid: number): Stat | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'latin1').split(') ')[1]?.split(' ') ?? []
    return { state: fields[0] ?? '?', ppid: Number(fields[1]), pgrp: Number(fields[2]) }
  } catch {
    return undefined
  }
}

/** Live pids whose process group is `pgid` (zombies too when asked), from /proc — not from the registry. */
export function groupPids(pgid: number, zombies = false): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const stat = statOf(Number(entry))
    if (stat !== undefined && stat.pgrp === pgid && (zombies || (stat.state !== 'Z' && stat.state !== 'X'))) found.push(Number(entry))
  }
  return found.sort((a, b) => a - b)
}

/** Whether `pid` is a live, non-zombie process. */
export function alive(pid: number): boolean {
  const stat = statOf(pid)
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X'
}

/** A marker unique to one test, to find its processes in /proc (`exec -a <marker> …`). */
export function marker(label: string): string {
  return `ksmark_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
}

/** Live pids whose argv[0] is `mark`. */
export function pidsWithArgv0(mark: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] === mark && alive(Number(entry))) found.push(Number(entry))
    } catch {
      // gone while we looked
    }
  }
  return found.sort((a, b) => a - b)
}

/** Wait until `check` holds (the bound only stops a hung test; it is not a timing assertion). */
export async function until(check: () => boolean, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Replace the measured elapsed time in model text, so the rest can be compared exactly. */
export function normalized(text: string): string {
  return text.replace(/(exited|alive) after \d+ ms/g, '$1 after N ms')
}

/** The shell as `caller` (default: no agent) may read it, through the service's own find. */
export function peek(host: KsHost | undefined, id: string, caller?: Caller): ShellSnapshot | undefined {
  return host?.shells.find(id, caller)
}
