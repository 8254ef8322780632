/**
 * When a local fast path may be used: ctx.fs is the plain local provider (it does not confine,
 * so reading the same path with node:fs sees exactly what the provider would). Any other
 * provider, a sandboxing one included, always goes through ctx.fs.
 */

import type { Context } from '@deepseek-ai/cordis'
import type { FsTarget } from '@deepseek-ai/dsh-fs'

let localClass: Promise<(abstract new (...args: never[]) => unknown) | undefined> | undefined

function loadLocalClass() {
  localClass ??= import('@deepseek-ai/dsh-fs-local').then(
    (module) => module.LocalFileSystem as unknown as abstract new (...args: never[]) => unknown,
    () => undefined,
  )
  return localClass
}

/** The node:fs path of `target` when the fast path applies, else undefined. */
export async function localPath(ctx: Context, target: FsTarget): Promise<string | undefined> {
  if (ctx.fs.sandboxMode !== undefined) return undefined
  const local = await loadLocalClass()
  if (local === undefined || !(ctx.fs instanceof local)) return undefined
  return ctx.fs.processPath(target)
}
