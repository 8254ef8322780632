// The local world: commands run on this host, each in its own process group (and cgroup, where the host may make
// one) watched through /proc.
import { accessSync, constants } from 'node:fs'
import type { Socket } from 'node:net'
import { delimiter, join, resolve } from 'node:path'
import { newShellCgroup } from './cgroup.ts'
import { spawnGroup, type Launch } from '../shells/launch.ts'
import { ProcessGroup } from './process-group.ts'
import type { StartedShell, ShellWorld } from '../shells/world-types.ts'
import { hostSyscalls } from './syscalls.ts'

/** Whether spawn would find the program: behind the cgroup join a missing one would only exit 127, not fail the spawn. */
function found(launch: Launch): boolean {
  const [program] = launch.argv
  const dirs = program.includes('/') ? [''] : (launch.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '')
  return dirs.some((dir) => {
    try {
      accessSync(dir === '' ? resolve(launch.cwd, program) : join(dir, program), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

export const localWorld: ShellWorld = {
  kind: 'local',
  start(launch, marks): StartedShell {
    // The leader joins its cgroup before it execs the (sandbox-confined) command, so nothing it starts is outside.
    const cgroup = found(launch) ? newShellCgroup() : undefined
    let child
    try {
      child = spawnGroup(cgroup === undefined ? launch : { ...launch, argv: cgroup.wrap(launch.argv) }, marks, launch.argv[0])
    } catch (error) {
      cgroup?.remove()
      throw error
    }
    const names = Object.entries(marks).map(([name, value]) => `${name}=${value}`)
    const processes = new ProcessGroup(child, names, hostSyscalls, cgroup)
    const release = () => {
      for (const stream of [child.stdout, child.stderr] as Socket[]) stream.unref()
      child.unref()
    }
    return { processes, stdout: child.stdout, stderr: child.stderr, release }
  },
}
