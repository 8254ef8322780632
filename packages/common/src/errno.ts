// The path tools' file errors: one errno map (what an OS error code says about a path, its FsError code), and cancellation.
import { FsError, type FsErrorCode } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'

/**
 * How a message names what failed: `path` the path as a whole ('the path', 'it'), `during` what was going on, `it` the
 * subject of a sentence ('it' unless given; '' for a bare phrase, as an entry's error in a listing is).
 */
export interface ErrnoSubject {
  path: string
  during: string
  it?: string
}

interface Errno {
  code: FsErrorCode
  says: (subject: ErrnoSubject) => string
}

const DENIED: Errno = { code: 'FS_PERMISSION_DENIED', says: () => 'permission denied' }

const ERRNO: Readonly<Record<string, Errno>> = {
  EACCES: DENIED,
  EPERM: DENIED,
  ENOENT: { code: 'FS_NOT_FOUND', says: ({ it = 'it', during }) => `${it === '' ? '' : `${it} `}vanished ${during}` },
  ENOTDIR: { code: 'FS_NOT_FOUND', says: ({ path }) => `a part of ${path} is not a directory` },
  ENAMETOOLONG: { code: 'FS_IO_ERROR', says: ({ path }) => `a name in ${path} is too long` },
  ELOOP: { code: 'FS_IO_ERROR', says: ({ path }) => `${path} loops through symlinks` },
}

/** The OS error code an error carries (`ENOENT`, …), or undefined for anything else (an FsError's own code included). */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof HarnessError || typeof code !== 'string' || !/^E[A-Z]+$/u.test(code) ? undefined : code
}

/** What `code` says and its FsError code; an unknown code (`known: false`) is named as the operating system's. */
export function errnoReason(code: string, subject: ErrnoSubject): { reason: string, code: FsErrorCode, known: boolean } {
  const errno = Object.hasOwn(ERRNO, code) ? ERRNO[code] : undefined
  if (errno === undefined) return { reason: `${code} from the operating system`, code: 'FS_IO_ERROR', known: false }
  return { reason: errno.says(subject), code: errno.code, known: true }
}

/** A raw OS error as an FsError: `${head}: ${reason}` (other errors, FsErrors and the host's included, are returned as they are). */
export function osError(error: unknown, head: string, subject: ErrnoSubject): unknown {
  const errno = errnoOf(error)
  if (errno === undefined) return error
  const { reason, code } = errnoReason(errno, subject)
  return new FsError(`${head}: ${reason}`, code, { cause: error })
}

/** A file operation's cancellation as ctx.fs reports it (`FS_ABORTED`), so a read or listing ends as the host's would. */
export function fsAborted(what: string, options?: ErrorOptions): FsError {
  return new FsError(`${what} aborted`, 'FS_ABORTED', options)
}

/** Throws {@link fsAborted} when `signal` has aborted. */
export function checkFsAborted(signal: AbortSignal, what: string): void {
  if (signal.aborted) throw fsAborted(what)
}
