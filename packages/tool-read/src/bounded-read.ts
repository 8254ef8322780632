/** A whole-file read bounded before it starts: open, fstat, then at most the size seen (and the limit), never to a moving end. */

import { open } from 'node:fs/promises'
import { FsError } from '@deepseek-ai/dsh-fs'

/** The file's bytes as of its open; `tooLarge` builds the refusal when fstat already shows more than `maxBytes`. */
export async function readAtMost(path: string, maxBytes: number, signal: AbortSignal,
  tooLarge: (size: number) => FsError): Promise<Uint8Array> {
  const handle = await open(path, 'r')
  try {
    const { size } = await handle.stat()
    if (size > maxBytes) throw tooLarge(size)
    const out = Buffer.allocUnsafe(size)
    let filled = 0
    while (filled < size) {
      if (signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
      const { bytesRead } = await handle.read(out, filled, Math.min(size - filled, 1 << 20), filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    return out.subarray(0, filled)
  } finally {
    await handle.close()
  }
}
