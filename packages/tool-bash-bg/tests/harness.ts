/** Shared setup for this package's specs: the real host with bash_bg mounted, and /proc probes. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { bootHost, type Host, type HostOptions } from '@gencode-ai/testkit'
import type { Caller, ShellSnapshot } from '../src/contract.ts'
import * as BashBg from '../src/index.ts'
import { openCgroupHost, type ShellCgroup } from '../src/local/cgroup.ts'
import { localSyscalls } from '../src/local/syscalls.ts'
import type { ShellRegistry } from '../src/shells/registry.ts'

/**
 * A DSH_HOME (the ledger) and a TMPDIR (host directories) of the calling spec file's own, set for its tests and removed
 * after: hosts other files boot meanwhile must not reap (or see) its shells.
 */
export function ownHomeAndTmp(label: string): { home: string, tmp: string } {
  const home = mkdtempSync(join(tmpdir(), `${label}-home-`))
  const tmp = mkdtempSync(join(tmpdir(), `${label}-tmp-`))
  const saved = { DSH_HOME: process.env.DSH_HOME, TMPDIR: process.env.TMPDIR }
  beforeAll(() => Object.assign(process.env, { DSH_HOME: home, TMPDIR: tmp }))
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    rmSync(home, { recursive: true, force: true })
    rmSync(tmp, { recursive: true, force: true })
  })
  return { home, tmp }
}

export interface BgHost extends Host {
  shells: ShellRegistry
}

export async function bootBashBg(
  config: Partial<BashBg.Config> = {}, options: HostOptions & { before?: (host: Host) => Promise<void> } = {},
): Promise<BgHost> {
  const host = await bootHost(options)
  await options.before?.(host)
  await host.ctx.plugin(BashBg, config)
  return Object.assign(host, { shells: host.ctx.get('backgroundShells') as ShellRegistry })
}

/**
 * Live pids whose command line contains `text` (with `argv0`, whose argv[0] is exactly the
 * text: the process already exec'd), found by scanning /proc — not by asking the registry.
 */
export function pidsWithMarker(text: string, argv0 = false): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0]
      if ((argv0 ? cmdline.split('\0')[0] === text : cmdline.includes(text)) && state !== 'Z' && Number(entry) !== process.pid) found.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

/** A marker unique to one test, to find its processes in /proc. */
export function marker(label: string): string {
  return `bgmark_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
}

/**
 * Wait until `check` holds, polling (no wall-clock assertion: the bound only stops a hung test). A hang explains itself:
 * the error names the environment the waiting file sees (shared by every file of a vitest worker), and `explain`'s
 * account of the state waited on (a kept shell's: `shellReport`).
 */
export async function until(check: () => boolean, what: string, boundMs = 20_000, explain?: () => string): Promise<void> {
  const deadline = Date.now() + boundMs
  while (!check()) {
    if (Date.now() > deadline) {
      let account = ''
      try {
        account = explain === undefined ? '' : `\n${explain()}`
      } catch (error) {
        account = `\n(no account: ${String(error)})`
      }
      throw new Error(`gave up waiting for ${what} after ${boundMs} ms (DSH_HOME=${process.env.DSH_HOME}, TMPDIR=${process.env.TMPDIR})${account}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The shell as `caller` (default: no agent) may read it, through the service's own find. */
export function peek(host: BgHost | undefined, id: string, caller?: Caller): ShellSnapshot | undefined {
  return host?.shells.find(id, caller)
}

/** Live pids carrying the shell's mark (DSH_BG_SHELL=<id>), found in /proc — not by asking the registry. */
export function membersOf(id: string): number[] {
  const mark = `\0DSH_BG_SHELL=${id}\0`
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const state = readFileSync(`/proc/${entry}/stat`, 'latin1').split(') ')[1]?.[0]
      if (state !== 'Z' && `\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(mark)) found.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return found.sort((a, b) => a - b)
}

/**
 * A shell cgroup in a cgroup host of its own, whose `remove` removes both; undefined where this machine lets no host
 * make one, or under `DSH_BG_TRACKING=marks` (the specs' probe of which tracking a shell gets here).
 */
export function newShellCgroup(): ShellCgroup | undefined {
  const host = process.env.DSH_BG_TRACKING === 'marks' ? undefined : openCgroupHost(localSyscalls())
  const cgroup = host?.create()
  if (host === undefined || cgroup === undefined) {
    host?.remove()
    return undefined
  }
  return { ...cgroup, remove: () => { const gone = cgroup.remove(); host.remove(); return gone } }
}
