/** Which execution world a call's commands run in: our own process layer on this host, or the composed ctx.subprocess. */
import type { Context } from '@deepseek-ai/cordis'
import type { FileSystem } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'
import { readsAreLocal } from '@gencode-ai/dsh-tool-common'

/** `local`: this host, through our own process layer; `subprocess`: wherever `runtime` runs commands. */
export type WorldChoice = { kind: 'local' } | { kind: 'subprocess', runtime: SubprocessRuntime }

/**
 * Whether `spawn` is dsh-subprocess-local's own, unmodified: no instance property and no subclass or wrapper class
 * stands in for it. By shape, not `instanceof` (the host may load another copy of the package), and not by function
 * identity (Cordis hands out every service method through a proxy). Unknown → false.
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
      'bash_bg: ctx.fs is not local and no ctx.subprocess is composed: nothing was run — compose the subprocess provider of that filesystem',
      'NO_EXECUTION_WORLD',
    )
  }
  return filesLocal && runtimeIsLocal(runtime) ? { kind: 'local' } : { kind: 'subprocess', runtime }
}

export function worldFor(ctx: Context): WorldChoice {
  return worldOf(ctx.get('fs'), ctx.get('subprocess'))
}
