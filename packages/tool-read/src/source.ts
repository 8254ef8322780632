/** The file's bytes: off the local disk on the fast path, else through ctx.fs (whole, as readBytes has no range; only when needed). */

import { open } from 'node:fs/promises'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsInfo, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { readAtMost } from './bounded-read.ts'
import { readsAreLocal } from './local-reads.ts'

/** Bytes the reader table looks at. */
const HEAD_BYTES = 64
/** Bytes per local read: a whole number of the provider's 64 KiB chunks. */
const BLOCK = 1024 * 1024

/** The node:fs path of `target` when the provider's reads are the local provider's own, else undefined. */
export function localPath(ctx: Context, target: FsTarget): string | undefined {
  return readsAreLocal(ctx.fs) ? ctx.fs.processPath(target) : undefined
}

export class Source {
  private whole: Promise<Uint8Array> | undefined
  private first: Promise<Uint8Array> | undefined

  constructor(
    readonly ctx: Context,
    readonly exec: ToolExecution,
    readonly target: FsTarget,
    readonly info: FsInfo,
    readonly maxFileBytes: number,
    readonly local: string | undefined,
  ) {}

  /** The first bytes (read once per call), to pick a reader and find a BOM. */
  head(): Promise<Uint8Array> {
    this.first ??= this.readHead()
    return this.first
  }

  /** Through a provider, of its UTF-8 stream, else of the whole file (when not too large). */
  private async readHead(): Promise<Uint8Array> {
    if (this.local !== undefined) {
      for await (const block of this.chunks(HEAD_BYTES)) return block
      return new Uint8Array(0)
    }
    try {
      for await (const text of await this.ctx.fs.streamText(this.target, this.exec.signal)) {
        if (text !== '') return Buffer.from(text.slice(0, HEAD_BYTES))
      }
      return new Uint8Array(0)
    } catch (error) {
      if (!(error instanceof FsError && error.code === 'FS_NOT_TEXT')) throw error
    }
    if (this.info.size !== undefined && this.info.size > this.maxFileBytes) return new Uint8Array(0)
    return (await this.bytes()).subarray(0, HEAD_BYTES)
  }

  /** The whole file, at most maxFileBytes (read once per call; locally, up to the size fstat gives at open). */
  bytes(): Promise<Uint8Array> {
    const tooLarge = (size: number) => new FsError(`cannot read "${this.target.displayPath}": ${size} bytes exceeds maxFileBytes (${this.maxFileBytes}) for a file read whole — read a smaller file, or raise maxFileBytes in tool-read's config`, 'FS_TOO_LARGE')
    const size = this.info.size
    if (size !== undefined && size > this.maxFileBytes) return Promise.reject(tooLarge(size))
    this.whole ??= this.local !== undefined
      ? readAtMost(this.local, this.maxFileBytes, this.exec.signal, tooLarge)
      : this.ctx.fs.readBytes(this.target, this.exec.signal, this.maxFileBytes)
    return this.whole
  }

  /** The file in order: 1 MiB local blocks, else the whole file; `reuse` shares one buffer (a fresh one per block costs ~40%). */
  async *chunks(blockBytes = BLOCK, reuse = false): AsyncIterable<Buffer> {
    if (this.local === undefined) {
      const bytes = await this.bytes()
      yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      return
    }
    const handle = await open(this.local, 'r')
    const shared = reuse ? Buffer.allocUnsafe(blockBytes) : undefined
    try {
      let position = 0
      for (;;) {
        if (this.exec.signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
        const block = shared ?? Buffer.allocUnsafe(blockBytes)
        let filled = 0
        while (filled < blockBytes) {
          const { bytesRead } = await handle.read(block, filled, blockBytes - filled, position + filled)
          if (bytesRead === 0) break
          filled += bytesRead
        }
        if (filled > 0) yield block.subarray(0, filled)
        position += filled
        if (filled < blockBytes) return
      }
    } finally {
      await handle.close()
    }
  }
}
