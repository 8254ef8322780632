/** Another execution world as a ShellWorld: each background shell one ctx.subprocess spawn in collect mode, with a spill. */
import type { SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import { worldLimits } from './limits.ts'
import { SeamProcesses } from './processes.ts'
import { spawnInWorld } from './spawn.ts'
import type { ShellWorld } from '../shells/world-types.ts'

/**
 * Per stream, what the provider holds in memory between two pulls of its collect readers. Each pull copies the whole
 * tail (dsh-subprocess-local concatenates it), so it is kept small; output faster than it between two pulls is marked lost.
 */
const TAIL_BYTES = 256 * 1024

/** `graceMs`: the seam's TERM→KILL grace, fixed at spawn; `maxLogBytes`: the spill's cap (the whole stream, in that world). */
export function seamWorld(runtime: SubprocessRuntime, options: { graceMs: number, maxLogBytes: number }): ShellWorld {
  const { graceMs, maxLogBytes } = options
  return {
    kind: 'subprocess',
    limits: worldLimits(graceMs),
    start(launch, marks) {
      const collect = { maxBytes: TAIL_BYTES, spill: { maxBytes: maxLogBytes } }
      const handle = spawnInWorld(runtime, launch, { stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs }, marks)
      const processes = new SeamProcesses(handle, graceMs)
      // The pump's timer is unref'd already; whether the handle holds the host open is its provider's choice.
      return { processes, stdout: processes.stdout, stderr: processes.stderr, release: () => {} }
    },
  }
}
