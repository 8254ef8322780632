/** Where the path argument leads (common's one rule: as written, else unescaped, else by raw bytes), checked against the workspace. */

import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { echo, hasRawBytes, type OutsideGate, placeArgument, type Placement, readsAreLocal, shownPath } from '@gencode-ai/dsh-tool-common'
import type { Config } from '../config.ts'
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
  const { placement, decoded } = await placeArgument(ctx, exec, path, readsAreLocal(ctx.fs), gate.logDir).catch((error: unknown) => {
    throw osError(error, echo(path))
  })
  // The outside-workspace policy ran as a tools/pre-execute gate on the path as written; check again what we open.
  if (!decoded) gate.verify(exec, path, placement)
  else if (!placement.inside && config.outsideWorkspace !== 'allow') throw outsideDecoded(ctx, path, placement)
  return { target: placement.target, raw: hasRawBytes(String(placement.target.targetKey)) }
}
