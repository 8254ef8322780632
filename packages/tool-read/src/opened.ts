/** The one descriptor a read uses: opened without following a final symlink, then proven to be the path that was checked. */

import { constants, type BigIntStats } from 'node:fs'
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises'
import { FsError } from '@deepseek-ai/dsh-fs'
import { echo } from '@gencode-ai/dsh-tool-common'

/** No-follow on the final component; non-blocking, so a FIFO swapped in after the stat cannot hang the open. */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

export interface Opened {
  handle: FileHandle
  stats: BigIntStats
}

function changedError(displayPath: string): FsError {
  return new FsError(`cannot read ${echo(displayPath)}: it changed while it was being read (moved, or swapped for a link) — read it again`, 'FS_STALE_VERSION')
}

/**
 * Open `real` (a realpath, as node:fs takes it) and prove the descriptor is that path now: the kernel's own name for it
 * (/proc/self/fd) must be `real`, so a parent exchanged or a component swapped for a link between the check and the open
 * is refused, never read. Without /proc (not Linux), the path's dev+ino must be the descriptor's.
 */
export async function openChecked(real: string | Buffer, displayPath: string): Promise<Opened> {
  let handle: FileHandle
  try {
    handle = await open(real, FLAGS)
  } catch (error) {
    // The checked path was a realpath: a final symlink now means it was swapped.
    if ((error as { code?: unknown }).code === 'ELOOP') throw changedError(displayPath)
    throw error
  }
  try {
    const [stats, same] = await Promise.all([handle.stat({ bigint: true }), isPath(handle, real)])
    if (!same) throw changedError(displayPath)
    return { handle, stats }
  } catch (error) {
    await handle.close()
    throw error
  }
}

async function isPath(handle: FileHandle, real: string | Buffer): Promise<boolean> {
  const expected = typeof real === 'string' ? Buffer.from(real) : real
  let actual: Buffer
  try {
    actual = await readlink(`/proc/self/fd/${handle.fd}`, { encoding: 'buffer' })
  } catch (error) {
    // Only a missing /proc (not Linux, or not mounted) falls back to the weaker check.
    const code = (error as { code?: unknown }).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
    const [own, path] = await Promise.all([handle.stat({ bigint: true }), lstat(real, { bigint: true })])
    return own.dev === path.dev && own.ino === path.ino
  }
  return actual.equals(expected)
}
