/**
 * When a local fast path may be used: the provider's reads are the local provider's own (plain
 * dsh-fs-local, or dsh-fs-sandbox, which fences only writes), so reading the same path with
 * node:fs sees exactly what the provider would. Any other provider goes through ctx.fs.
 */

import type { Context } from '@deepseek-ai/cordis'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import { readsAreLocal } from './local-reads.ts'

/** The node:fs path of `target` when the fast path applies, else undefined. */
export async function localPath(ctx: Context, target: FsTarget): Promise<string | undefined> {
  return readsAreLocal(ctx.fs) ? ctx.fs.processPath(target) : undefined
}
