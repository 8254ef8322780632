/** A failed read's error as the model gets it: raw OS errors through common's errno map (every message echoes paths with echo()). */

import { osError as commonOsError } from '@gencode-ai/dsh-tool-common'

/** A raw OS error (a name too long, a symlink loop, permission denied, a vanished file) as an FsError naming the file. */
export function osError(error: unknown, file: string): unknown {
  return commonOsError(error, `cannot read ${file}`, { path: 'the path', during: 'while being read' })
}
