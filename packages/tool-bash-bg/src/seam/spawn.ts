/** One spawn through the composed ctx.subprocess, in its execution world: exactly the planned argv, cwd and explicit env. */
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { SubprocessHandle, SubprocessRuntime, SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import type { Launch } from '../contract.ts'

type Spec = Pick<SubprocessSpawnSpec, 'stdio' | 'graceMs' | 'signal'>
type Marks = Readonly<Record<string, string>>

/** Spawn through the seam; a refusal or a failed start is SPAWN_FAILED, naming the program. */
export function spawnInWorld(toolName: string, runtime: SubprocessRuntime, launch: Launch, spec: Spec, marks: Marks): SubprocessHandle {
  const failed = (cause: unknown) => new HarnessError(
    `${toolName}: ctx.subprocess could not start ${launch.argv[0]} (${cause instanceof Error ? cause.message : String(cause)}) — check that it is installed in that world`,
    'SPAWN_FAILED', { cause },
  )
  let handle: SubprocessHandle
  try {
    handle = runtime.spawn({ argv: launch.argv, cwd: launch.cwd, env: { ...launch.env, ...marks }, ...spec })
  } catch (error) {
    throw failed(error)
  }
  // A failed start rejects `done`; the pid says so at once.
  if (handle.pid <= 0) {
    handle.done.catch(() => {})
    throw failed('no process id')
  }
  return handle
}
