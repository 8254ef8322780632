// The local world: commands run on this host, each in its own process group watched through /proc.
import type { Socket } from 'node:net'
import { spawnGroup } from './launch.ts'
import { ProcessGroup } from './process-group.ts'
import type { StartedShell, ShellWorld } from './shell-processes.ts'

export const localWorld: ShellWorld = {
  kind: 'local',
  start(launch, marks): StartedShell {
    const child = spawnGroup(launch, marks)
    const names = Object.entries(marks).map(([name, value]) => `${name}=${value}`)
    const processes = new ProcessGroup(child, names)
    const release = () => {
      for (const stream of [child.stdout, child.stderr] as Socket[]) stream.unref()
      child.unref()
    }
    return { processes, stdout: child.stdout, stderr: child.stderr, release }
  },
}
