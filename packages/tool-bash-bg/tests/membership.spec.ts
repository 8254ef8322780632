// Membership no process wipes by accident: a cgroup per command where the host may make one, else the group, the
// marks, and every marked pid seen once; each proven on real processes (title rewriters, setsid, env -i).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, membersOf, newShellCgroup, peek, marker, pidsWithMarker, until, type BgHost } from './harness.ts'

let host: BgHost | undefined
const strays: number[] = []
afterEach(async () => {
  delete process.env.DSH_BG_TRACKING
  await host?.dispose()
  host = undefined
  for (const pid of strays.splice(0)) try { process.kill(pid, 'SIGKILL') } catch { /* gone */ }
})

/** Whether this machine lets the host make a cgroup (root with cgroup v2 cgroup.kill, or the v1 freezer). */
const probe = newShellCgroup()
probe?.remove()
const cgroups = probe !== undefined
const NO_CGROUP = 'no cgroup can be made here (not root, no delegated cgroup v2 subtree, no v1 freezer)'

const STOP = { signal: 'SIGTERM', force: true, timeoutMs: 2000 } as const

async function start(h: BgHost, command: string): Promise<{ shell_id: string, pid: number }> {
  const result = await execTool(h.ctx, 'bash_bg', { command, run_in_background: true })
  if (result.isError) throw new Error(textOf(result))
  return result.value as unknown as { shell_id: string, pid: number }
}

/** The daemon once renamed: its command line starts with the new title (before, the shell's names it too). */
function renamed(title: string): number[] {
  return pidsWithMarker(title).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith(`${title} `)
    } catch {
      return false
    }
  })
}

function environOf(pid: number): string {
  return readFileSync(`/proc/${pid}/environ`, 'latin1')
}

/** A daemon that rewrites its title (as nginx or postgres do): the long `$0` overwrites what /proc shows of its environment. */
function titleDaemon(title: string, go?: string): string {
  const wait = go === undefined ? '' : `select(undef, undef, undef, 0.05) until -e "${go}"; `
  return `setsid perl -e '${wait}$0 = "${title}" . (" " x 4000); sleep 100' </dev/null >/dev/null 2>&1 &`
}

/** This process's shell cgroups still on the machine, found in the cgroup filesystem, not asked of the registry. */
function ownShellCgroups(): string[] {
  const root = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((dir) => existsSync(join(dir, 'cgroup.procs')))
  if (root === undefined) return []
  return readdirSync(root).filter((name) => name.startsWith(`dsh-bg-${process.pid}-`))
    .flatMap((name) => readdirSync(join(root, name), { withFileTypes: true }).filter((entry) => entry.isDirectory()))
    .map((entry) => entry.name)
}

describe.skipIf(!cgroups)(`a cgroup per command (skipped: ${NO_CGROUP})`, () => {
  it('a title-rewriting daemon and an env -i setsid escapee are still the shell\'s: stopped, 0 survive, tracking cgroup', async () => {
    host = await bootBashBg()
    const title = marker('title')
    const bare = marker('envi')
    const shell = await start(host, `${titleDaemon(title)} env -i setsid bash -c 'exec -a ${bare} sleep 60' & exec sleep 60`)
    await until(() => renamed(title).length === 1 && pidsWithMarker(bare, true).length === 1, 'the daemon and the escapee')
    const [daemon] = renamed(title)
    await until(() => !environOf(daemon!).includes('DSH_BG_SHELL='), 'the new title to overwrite the environment')
    // Neither carries the mark any more: only the cgroup knows them.
    expect(membersOf(shell.shell_id)).not.toContain(daemon)
    expect(environOf(pidsWithMarker(bare, true)[0]!)).not.toContain('DSH_BG_SHELL=')
    const outcome = await host.shells.stop(shell.shell_id, STOP, undefined)
    expect(outcome).toMatchObject({ outcome: 'terminated', survivors: [], tracking: 'cgroup' })
    expect(pidsWithMarker(title)).toEqual([])
    expect(pidsWithMarker(bare, true)).toEqual([])
    expect((await host.shells.settled(shell.shell_id)).status).toBe('killed')
    expect(ownShellCgroups()).toEqual([])
  })

  it('under the sandbox runner too: the join wraps the confined argv, so an env -i escapee is still caught', async () => {
    host = await bootBashBg({}, {
      before: async (h) => {
        await h.ctx.plugin(SandboxPolicyService, { mode: 'workspace-write' })
        await h.ctx.plugin(LocalSandboxProvider, {})
      },
    })
    const bare = marker('sandboxenvi')
    const shell = await start(host, `env -i setsid bash -c 'exec -a ${bare} sleep 60' & exec sleep 60`)
    await until(() => pidsWithMarker(bare, true).length === 1, 'the escapee')
    expect(await host.shells.stop(shell.shell_id, STOP, undefined)).toMatchObject({ survivors: [], tracking: 'cgroup' })
    expect(pidsWithMarker(bare, true)).toEqual([])
  })

  it('a shell whose leader left only an unmarked daemon keeps running, counting it, until it is stopped', async () => {
    host = await bootBashBg()
    const bare = marker('bare')
    const shell = await start(host, `env -i setsid bash -c 'exec -a ${bare} sleep 60' & exit 3`)
    await until(() => peek(host, shell.shell_id)?.leader_exited_at !== null && peek(host, shell.shell_id)?.processes === 1, 'the watcher to count the daemon')
    expect(peek(host, shell.shell_id)).toMatchObject({ status: 'running', exit_code: 3 })
    expect(await host.shells.stop(shell.shell_id, STOP, undefined)).toMatchObject({ survivors: [], tracking: 'cgroup' })
    expect(pidsWithMarker(bare, true)).toEqual([])
  })

  it('a foreground `setsid server >/dev/null 2>&1 </dev/null &` is a leftover every time, and stopped', async () => {
    host = await bootBashBg()
    for (let round = 0; round < 3; round++) {
      const server = marker('fgserver')
      const result = await execTool(host.ctx, 'bash_bg', { command: `env -i setsid bash -c 'exec -a ${server} sleep 60' >/dev/null 2>&1 </dev/null & echo started` })
      strays.push(...pidsWithMarker(server, true))
      expect(result.value).toMatchObject({ exit_code: 0, leftovers_stopped: 1, output_held_open: false })
      expect(textOf(result)).toBe('started\n[stopped 1 leftover process of this command; use run_in_background for servers]')
      expect(pidsWithMarker(server, true)).toEqual([])
    }
    expect(ownShellCgroups()).toEqual([])
  })
})

describe('tracking by marks (the fallback where no cgroup can be had, forced here)', () => {
  it('a marked daemon seen once stays counted after a new title wipes its mark, and is stopped; the outcome says what marks miss', async () => {
    process.env.DSH_BG_TRACKING = 'marks'
    host = await bootBashBg()
    const title = marker('marktitle')
    const go = join(tmpdir(), `${title}.go`)
    const shell = await start(host, `${titleDaemon(title, go)} exit 0`)
    // The leader exits; the watcher's scans find the daemon by its mark before it renames itself.
    await until(() => peek(host, shell.shell_id)?.leader_exited_at !== null && peek(host, shell.shell_id)?.processes === 1, 'a scan to count the daemon')
    const [daemon] = membersOf(shell.shell_id)
    expect(daemon).toBeDefined()
    writeFileSync(go, '')
    await until(() => renamed(title).includes(daemon!) && !environOf(daemon!).includes('DSH_BG_SHELL='), 'the new title to overwrite the environment')
    expect(membersOf(shell.shell_id)).toEqual([])
    // Later scans (the watch polls up to every second) keep counting it by pid and start time.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(peek(host, shell.shell_id)).toMatchObject({ status: 'running', processes: 1 })
    const outcome = await host.shells.stop(shell.shell_id, STOP, undefined)
    expect(outcome).toMatchObject({ outcome: 'terminated', survivors: [], tracking: 'marks' })
    expect(pidsWithMarker(title)).toEqual([])
  })

  it('a foreground setsid child that kept its marks is a leftover and stopped', async () => {
    process.env.DSH_BG_TRACKING = 'marks'
    host = await bootBashBg()
    const server = marker('fgmarks')
    // Marks are read from /proc/<pid>/environ, which a process mid-exec may not show: let the child's execs finish
    // before the command ends (what a scan cannot see is tracking by marks' stated limit; a cgroup has no such window).
    const result = await execTool(host.ctx, 'bash_bg', { command: `setsid bash -c 'exec -a ${server} sleep 60' >/dev/null 2>&1 </dev/null & sleep 0.3; echo started` })
    strays.push(...pidsWithMarker(server, true))
    expect(result.value).toMatchObject({ exit_code: 0, leftovers_stopped: 1 })
    expect(pidsWithMarker(server, true)).toEqual([])
  })
})
