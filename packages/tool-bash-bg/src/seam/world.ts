/** Another execution world: every command one ctx.subprocess spawn in collect mode (a background one with a spill). */
import type { SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import type { Launch } from '../contract.ts'
import { runInSeam, spawnInWorld, type SeamRunOptions } from './foreground.ts'
import { SeamProcesses } from './processes.ts'

/** Per stream, what the provider keeps between two pulls (each pull copies all of it); output faster than that is marked lost. */
const TAIL_BYTES = 256 * 1024

/** What a command run through ctx.subprocess cannot be promised: the seam has one stop and no view of the process table. */
function worldLimits(graceMs: number): string {
  return `runs through ctx.subprocess: a stop is SIGTERM, then SIGKILL after ${graceMs} ms, whatever signal is asked; `
    + 'a process that leaves its process tree is not seen, counted or stopped'
}

/** `stopGraceMs`: a background shell's TERM→KILL grace (the default kill's); `maxLogBytes`: the spill's cap; the rest the policy's. */
type SeamOptions = { toolName: string, maxLogBytes: number, stopGraceMs: number, runGraceMs: number, afterKillMs: number, settleMs: number }

export class SeamWorld {
  /** What a background shell here cannot be promised. */
  readonly limits: string

  constructor(private readonly runtime: SubprocessRuntime, private readonly options: SeamOptions) {
    this.limits = worldLimits(options.stopGraceMs)
  }

  start(launch: Launch, marks: Readonly<Record<string, string>>) {
    const { toolName, stopGraceMs: graceMs, afterKillMs, settleMs, maxLogBytes } = this.options
    const collect = { maxBytes: TAIL_BYTES, spill: { maxBytes: maxLogBytes } }
    const handle = spawnInWorld(toolName, this.runtime, launch, { stdio: { stdin: 'ignore', stdout: collect, stderr: collect }, graceMs }, marks)
    const processes = new SeamProcesses(handle, { toolName, graceMs, afterKillMs, settleMs, limits: this.limits })
    // The pump's timer is unref'd already; whether the handle holds the host open is its provider's choice.
    return { processes, stdout: processes.stdout, stderr: processes.stderr, release: () => {} }
  }

  run(launch: Launch, run: Pick<SeamRunOptions, 'timeoutMs' | 'maxOutputBytes' | 'signal' | 'marks' | 'started'>) {
    const { toolName, runGraceMs: graceMs, settleMs } = this.options
    return runInSeam(this.runtime, launch, { ...run, toolName, graceMs, settleMs, limits: worldLimits(graceMs) })
  }
}
