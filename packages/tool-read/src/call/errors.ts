/** A failed read's error as the model gets it: the path echoed one way, raw OS errors through common's errno map. */

import { echo, osError as commonOsError } from '@gencode-ai/dsh-tool-common'

/** A reader's error with the path it names escaped and cut as every echo is (readers quote the path as it is). */
export function echoed(error: unknown, displayPath: string): unknown {
  const shown = echo(displayPath)
  if (!(error instanceof Error) || shown === `"${displayPath}"`) return error
  error.message = error.message.replaceAll(JSON.stringify(displayPath), shown).replaceAll(`"${displayPath}"`, shown)
  return error
}

/** A raw OS error (a name too long, a symlink loop, permission denied, a vanished file) as an FsError naming the file. */
export function osError(error: unknown, file: string): unknown {
  return commonOsError(error, `cannot read ${file}`, { path: 'the path', during: 'while being read' })
}
