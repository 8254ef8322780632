/** One local command's leader: spawned in a new process group with piped output, after checking its program exists. */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { Launch } from '../contract.ts'

export type Piped = ChildProcessByStdio<null, Readable, Readable>

/** Whether spawn would find the program: behind the cgroup join a missing one would only exit 127, not fail the spawn. */
export function found(launch: Launch): boolean {
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

/** Spawn the leader of a new process group; throws SPAWN_FAILED naming `shown` (the program the call asked for) when nothing started. */
export function spawnGroup(toolName: string, launch: Launch, marks: Readonly<Record<string, string>>, shown: string): Piped {
  const [program, ...args] = launch.argv
  const failed = (cause?: unknown) => new HarnessError(
    `${toolName}: could not start ${shown} — check that it is installed and on PATH`, 'SPAWN_FAILED', cause === undefined ? undefined : { cause },
  )
  let child: Piped
  try {
    child = spawn(program, args, { cwd: launch.cwd, env: { ...launch.env, ...marks }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    // Arguments spawn cannot pass (a NUL byte) throw synchronously.
    throw failed(error)
  }
  if (child.pid === undefined) {
    child.once('error', () => {})
    throw failed()
  }
  return child
}
