/** Where the path argument leads: as written, else unescaped (a name as the tools show it), checked against the workspace. */

import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { echo, hasRawBytes, type OutsideGate, place, type Placement, shownPath, unescapeName } from '@gencode-ai/dsh-tool-common'
import type { Config } from '../config.ts'
import { placeEscaped } from '../escaped-path.ts'
import { localPath } from '../target.ts'
import { osError } from './errors.ts'

export interface Settled {
  target: FsTarget
  /** A name with bytes that are not UTF-8: it exists only for node:fs (no provider stat, no observation the host could use). */
  raw: boolean
}

/** A decoded path outside the workspace: the pre-execute gate saw only the path as written, so there was no asking. */
function outsideDecoded(ctx: Context, path: string, placement: Placement): FsError {
  const real = ctx.fs.processPath(placement.target)
  return new FsError(`file_path ${echo(path)} is outside the workspace ${shownPath(placement.root.displayPath)} (it resolves to ${shownPath(real)}) — read a file inside the workspace`, 'FS_PERMISSION_DENIED')
}

export async function settle(ctx: Context, exec: ToolExecution, path: string, gate: OutsideGate, config: Config): Promise<Settled> {
  // The outside-workspace policy ran as a tools/pre-execute gate; check again what we open.
  const literal = await place(ctx, exec, path).catch((error: unknown) => {
    throw osError(error, echo(path))
  })
  // Decoding is a second try: any failure of it leaves the path as written, whose errors say what is wrong.
  const literalExists = async () => await ctx.fs.stat(literal.target, exec.signal).catch(() => undefined) !== undefined
  const decoded = unescapeName(path) === undefined || await literalExists()
    ? undefined
    : await placeEscaped(ctx, exec, path, literal, localPath(ctx, literal.target) !== undefined).catch(() => undefined)
  if (decoded === undefined) gate.verify(exec, path, literal)
  else if (!decoded.inside && config.outsideWorkspace !== 'allow') throw outsideDecoded(ctx, path, decoded)
  const { target } = decoded ?? literal
  return { target, raw: hasRawBytes(String(target.targetKey)) }
}
