// A path argument holding escapes (names as the tools show them), decoded and placed again.
/**
 * A path argument that does not exist as written but holds escapes (names as read_file and list_directory show them):
 * decoded and placed again, so a model can pass back a name it saw — also one whose bytes are not UTF-8.
 */

import { realpath } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { FsTargetKey } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { fsPath, hasRawBytes, nameFromBytes, place, type Placement, unescapeName } from '@gencode-ai/dsh-tool-common'

/** The decoded path's placement, or undefined when there is nothing to decode or it does not exist either. */
export async function placeEscaped(
  ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal'>, path: string, literal: Placement, local: boolean,
): Promise<Placement | undefined> {
  const decoded = unescapeName(path)
  if (decoded === undefined || decoded === path) return undefined
  if (!hasRawBytes(decoded)) {
    const placement = await place(ctx, exec, decoded)
    return await ctx.fs.stat(placement.target, exec.signal) === undefined ? undefined : placement
  }
  // Only node:fs takes bytes: the provider's resolve would turn them into U+FFFD.
  if (!local) return undefined
  const displayPath = resolve(literal.root.displayPath, decoded)
  let real: string
  try {
    real = nameFromBytes(await realpath(fsPath(displayPath), { encoding: 'buffer' }))
  } catch {
    return undefined
  }
  const target = { displayPath, targetKey: FsTargetKey(real) }
  return { target, root: literal.root, inside: ctx.fs.contains(literal.root, target) }
}
