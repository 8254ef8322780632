/** A failed read's error as the model gets it: the path echoed one way, raw OS errors named in the host's vocabulary. */

import { FsError, type FsErrorCode } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { echo } from '@gencode-ai/dsh-tool-common'

/** A reader's error with the path it names escaped and cut as every echo is (readers quote the path as it is). */
export function echoed(error: unknown, displayPath: string): unknown {
  const shown = echo(displayPath)
  if (!(error instanceof Error) || shown === `"${displayPath}"`) return error
  error.message = error.message.replaceAll(JSON.stringify(displayPath), shown).replaceAll(`"${displayPath}"`, shown)
  return error
}

/** A raw OS error (a name too long, a symlink loop, permission denied, a vanished file) as an FsError naming the file. */
export function osError(error: unknown, file: string): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (error instanceof HarnessError || typeof code !== 'string' || !code.startsWith('E')) return error
  const reasons: Record<string, [string, FsErrorCode]> = {
    ENAMETOOLONG: ['a name in the path is too long', 'FS_IO_ERROR'],
    ELOOP: ['the path loops through symlinks', 'FS_IO_ERROR'],
    EACCES: ['permission denied', 'FS_PERMISSION_DENIED'],
    EPERM: ['permission denied', 'FS_PERMISSION_DENIED'],
    ENOENT: ['it vanished while being read', 'FS_NOT_FOUND'],
    ENOTDIR: ['a part of the path is not a directory', 'FS_NOT_FOUND'],
  }
  const [reason, fsCode] = reasons[code] ?? [`${code} from the operating system`, 'FS_IO_ERROR']
  return new FsError(`cannot read ${file}: ${reason}`, fsCode, { cause: error })
}
