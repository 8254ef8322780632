/** The execution world of a call, chosen once: our own process layer on this host, or the composed ctx.subprocess. */
import { randomBytes } from 'node:crypto'
import type { Context } from '@deepseek-ai/cordis'
import type { FileSystem } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { scrubbedParentEnv, type SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import { readsAreLocal } from '@gencode-ai/dsh-tool-common'
import type { LocalHost } from '../local/host.ts'
import { SeamWorld } from '../seam/world.ts'
import { runForeground } from './foreground.ts'
import type { ForegroundRuns } from './foreground-runs.ts'
import { localDirectory, worldDirectory } from './launch.ts'
import { KILL_POLICY } from './kill-policy.ts'
import { streamValue } from './output-stream.ts'
import type { ShellWorld } from './world-types.ts'
import { writtenHere } from './written-here.ts'

/** `local`: this host, through our own process layer; `subprocess`: wherever `runtime` runs commands. */
export type WorldChoice = { kind: 'local' } | { kind: 'subprocess', runtime: SubprocessRuntime }

/**
 * Whether `spawn` is dsh-subprocess-local's own, unmodified (no own property, subclass or wrapper stands in). By shape:
 * the host may load another copy of the package, and Cordis proxies every service method. Unknown → false.
 */
export function runtimeIsLocal(runtime: object): boolean {
  if (Object.hasOwn(runtime, 'spawn')) return false
  for (let proto = Object.getPrototypeOf(runtime); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (!Object.hasOwn(proto, 'spawn')) continue
    return (proto as { constructor?: { name?: string } }).constructor?.name === 'LocalSubprocessRuntime'
  }
  return false
}

/** Our process layer serves only where both the files and the processes are this host's; failing safe. */
export function worldOf(fs: FileSystem | undefined, runtime: SubprocessRuntime | undefined): WorldChoice {
  const filesLocal = fs === undefined || readsAreLocal(fs)
  if (runtime === undefined) {
    if (filesLocal) return { kind: 'local' }
    throw new HarnessError(
      'ctx.fs is not local and no ctx.subprocess is composed: nothing was run — compose the subprocess provider of that filesystem',
      'NO_EXECUTION_WORLD',
    )
  }
  return filesLocal && runtimeIsLocal(runtime) ? { kind: 'local' } : { kind: 'subprocess', runtime }
}

/**
 * What the worlds are made of: this plugin's local host, its foreground runs, its name in messages, the log cap, the
 * default kill's wait.
 */
export interface WorldParts {
  local: LocalHost
  runs: ForegroundRuns
  toolName: string
  maxLogBytes: number
  stopGraceMs(): number
}

/** This host, through our own process layer: a foreground run is marked like a shell, so a leftover is still found. */
export function localWorld(local: LocalHost, runs: ForegroundRuns): ShellWorld {
  return {
    directory: localDirectory,
    baseEnv: () => scrubbedParentEnv(),
    start: (launch, shellId, files) => {
      const { ttlMs, ledger, ...kept } = files
      return local.startKept(launch, shellId, { files: { ...kept }, ttlMs, ...ledger === undefined ? {} : { ledger } })
    },
    run: (launch, options) => runs.run(options.signal, (signal, started) => {
      const child = local.start(launch, `fg-${randomBytes(4).toString('hex')}`)
      started(child.processes)
      return runForeground(child, { ...options, signal })
    }),
  }
}

/** Wherever `runtime` runs commands; the cwd is judged by that world's filesystem (with none, its spawn judges). */
function seamWorld(runtime: SubprocessRuntime, fs: FileSystem | undefined, parts: WorldParts): ShellWorld {
  const { local, runs, toolName, maxLogBytes } = parts
  const { runGraceMs, afterKillMs, settleMs } = KILL_POLICY
  const seam = new SeamWorld(runtime, { toolName, maxLogBytes, stopGraceMs: parts.stopGraceMs(), runGraceMs, afterKillMs, settleMs })
  return {
    limits: seam.limits,
    directory: (cwd) => worldDirectory(fs, cwd),
    // The provider applies its own base environment.
    baseEnv: () => ({}),
    start: (launch, shellId, files) => Promise.resolve(writtenHere(files, () => seam.start(launch, local.marks(shellId)))),
    run: (launch, options) => runs.run(options.signal, async (signal, started) => {
      const { stdout, stderr, ...run } = await seam.run(launch, { ...options, signal, marks: {}, started })
      return { ...run, stdout: judged(stdout), stderr: judged(stderr) }
    }),
  }
}

/** Another world's stream, judged as the local tail is. */
const judged = ({ bytes, ...kept }: { text: string, cut: number, bytes: number }) => streamValue(kept, bytes)

/** The world of this call (refusing when there is none). */
export function worldFor(ctx: Context, parts: WorldParts): ShellWorld {
  const fs = ctx.get('fs')
  const choice = worldOf(fs, ctx.get('subprocess'))
  return choice.kind === 'local' ? localWorld(parts.local, parts.runs) : seamWorld(choice.runtime, fs, parts)
}
