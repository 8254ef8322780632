// The path argument's one rule for both path tools: as written, else unescaped (a name as the tools show it), else by raw bytes.
/**
 * A path that does not exist as written but holds escapes (names as read_file and list_directory show them) is decoded
 * and placed again, so a model can pass back a name it saw; a decoded name whose bytes are not UTF-8 exists only for
 * node:fs (the provider's resolve would turn them into U+FFFD), so it is found by its bytes when reads are local.
 */

import { realpath } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { FsTargetKey } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { fsPath, hasRawBytes, nameFromBytes, unescapeName } from './escape.ts'
import { type LogDirOf, place, type Placement } from './workspace.ts'

export interface PlacedArgument {
  placement: Placement
  /** Whether it is the decoded path (the outside-workspace gate before dispatch judged only the path as written). */
  decoded: boolean
}

type Exec = Pick<ToolExecution, 'agent' | 'signal'>

/** Whether something is there; a path the provider cannot stat (a name too long, …) counts as nothing. */
async function exists(ctx: Context, exec: Exec, placement: Placement): Promise<boolean> {
  try {
    return await ctx.fs.stat(placement.target, exec.signal) !== undefined
  } catch {
    return false
  }
}

/** The decoded path's placement, or undefined when there is nothing to decode or it does not exist either. */
async function placeEscaped(
  ctx: Context, exec: Exec, path: string, literal: Placement, local: boolean, logDir: LogDirOf | undefined,
): Promise<Placement | undefined> {
  const decoded = unescapeName(path)
  if (decoded === undefined || decoded === path || decoded.includes('\0')) return undefined
  if (!hasRawBytes(decoded)) {
    const placement = await place(ctx, exec, decoded, logDir)
    return await exists(ctx, exec, placement) ? placement : undefined
  }
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

/**
 * Where the path argument leads: as written when something is there or it holds no escape; else decoded when that
 * exists; else as written (whose errors then say what is wrong). `local`: node:fs may stand in for the provider's reads;
 * `logDir`: bash_bg's log directory, inside.
 */
export async function placeArgument(ctx: Context, exec: Exec, path: string, local: boolean, logDir?: LogDirOf): Promise<PlacedArgument> {
  const literal = await place(ctx, exec, path, logDir)
  if (unescapeName(path) === undefined || await exists(ctx, exec, literal)) return { placement: literal, decoded: false }
  // Decoding is a second try: any failure of it leaves the path as written.
  let decoded: Placement | undefined
  try {
    decoded = await placeEscaped(ctx, exec, path, literal, local, logDir)
  } catch {
    decoded = undefined
  }
  return decoded === undefined ? { placement: literal, decoded: false } : { placement: decoded, decoded: true }
}
