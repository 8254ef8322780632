// A file's bytes for one read: one checked descriptor on the local fast path, else ctx.fs.
/**
 * The file's bytes: on the local fast path, from one descriptor opened once per call (every phase reads it, up to the
 * size it had when opened); else through ctx.fs (by readByteRange where it exists, else whole if need be).
 */

import type { FileHandle } from 'node:fs/promises'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsInfo, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { checkFsAborted, echo, fsPath } from '@gencode-ai/dsh-tool-common'
import { openChecked } from './opened.ts'
import { notRegular } from './target.ts'
import { wholeReadsOf } from './whole-reads.ts'

/** Bytes the reader table looks at (a PDF header may follow up to 1024 bytes of junk). */
const HEAD_BYTES = 1024
/** Bytes per local read: a whole number of the provider's 64 KiB chunks. */
const BLOCK = 1024 * 1024

/** FileSystem.readByteRange, DSH 0.1.3 on (packages/fs/fs/src/index.ts); rc.8's type lacks it. */
type RangeRead = (target: FsTarget, range: { offset: number, length: number }, signal?: AbortSignal) => Promise<Uint8Array>

/** The provider's range read, when it has one. */
function rangeReader(fs: object): RangeRead | undefined {
  const read = (fs as { readByteRange?: unknown }).readByteRange
  return typeof read === 'function' ? (read as RangeRead).bind(fs) : undefined
}

export class Source {
  private whole: Promise<Uint8Array> | undefined
  private first: Promise<Uint8Array> | undefined
  /** Gives back what this call holds of the plugin's budget for whole-file reads. */
  private release: (() => void) | undefined

  /** Use {@link Source.open}. On the local path `info.size` is the descriptor's size when opened: reads stop there. */
  private constructor(
    private readonly ctx: Context,
    private readonly exec: ToolExecution,
    readonly target: FsTarget,
    readonly info: FsInfo,
    readonly maxFileBytes: number,
    readonly local: string | undefined,
    private readonly handle: FileHandle | undefined,
    /** On the local path: the descriptor's device, inode, size and mtime when opened (what an unchanged re-read compares). */
    readonly identity?: string,
  ) {}

  /**
   * The source of one call. `local` (a realpath, possibly with raw bytes as surrogates): open it once, proven to be
   * that path (see opened.ts), a regular file; every read of the call then comes from that descriptor.
   */
  static async open(
    ctx: Context, exec: ToolExecution, target: FsTarget, info: FsInfo, maxFileBytes: number, local: string | undefined, listTool: string,
  ): Promise<Source> {
    if (local === undefined) return new Source(ctx, exec, target, info, maxFileBytes, undefined, undefined)
    const { handle, stats } = await openChecked(fsPath(local), target.displayPath)
    if (!stats.isFile()) {
      await handle.close()
      throw notRegular(target, stats.isDirectory() ? 'directory' : 'other', listTool)
    }
    const identity = `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`
    return new Source(ctx, exec, target, { ...info, size: Number(stats.size) }, maxFileBytes, local, handle, identity)
  }

  /** The call's signal: every read of the bytes stops on it. */
  get signal(): AbortSignal {
    return this.exec.signal
  }

  /** Through the provider: the file as UTF-8 text in chunks. */
  async streamText(): Promise<AsyncIterable<string>> {
    return await this.ctx.fs.streamText(this.target, this.exec.signal)
  }

  async close(): Promise<void> {
    this.release?.()
    await this.handle?.close()
  }

  /** The file's size now when it is larger than when opened (what was read stops at the first), else undefined. */
  async grown(): Promise<number | undefined> {
    if (this.handle === undefined || this.info.size === undefined) return undefined
    const now = (await this.handle.stat()).size
    return now > this.info.size ? now : undefined
  }

  /** The first bytes (read once per call), to pick a reader and find a BOM. */
  head(): Promise<Uint8Array> {
    this.first ??= this.readHead()
    return this.first
  }

  /** Through a provider, its first range, else of its UTF-8 stream, else of the whole file (when not too large). */
  private async readHead(): Promise<Uint8Array> {
    if (this.handle !== undefined || this.ranged()) {
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

  /** The whole file, at most maxFileBytes (read once per call; locally, up to the descriptor's size at open). */
  bytes(): Promise<Uint8Array> {
    const tooLarge = (size: number) => new FsError(`cannot read ${echo(this.target.displayPath)}: ${size} bytes exceeds maxFileBytes (${this.maxFileBytes}) for a file read whole — read a smaller file, or raise maxFileBytes in tool-read's config`, 'FS_TOO_LARGE')
    const size = this.info.size
    if (size !== undefined && size > this.maxFileBytes) return Promise.reject(tooLarge(size))
    this.whole ??= this.readHeld(size ?? this.maxFileBytes)
    return this.whole
  }

  /** The whole file once the plugin's budget for whole-file reads admits it (held until close). */
  private async readHeld(size: number): Promise<Uint8Array> {
    this.release = await wholeReadsOf(this.ctx, this.maxFileBytes).hold(size, this.exec.signal)
    if (this.handle !== undefined) return await this.readWhole()
    return await this.ctx.fs.readBytes(this.target, this.exec.signal, this.maxFileBytes)
  }

  /** Whether the bytes come in ranges through the provider (not local, and it has readByteRange). */
  ranged(): boolean {
    return this.handle === undefined && rangeReader(this.ctx.fs) !== undefined
  }

  /** Through a provider: blocks by readByteRange up to the size stat gave, else the whole file in one. */
  private async *providerChunks(blockBytes: number): AsyncIterable<Buffer> {
    const range = rangeReader(this.ctx.fs)
    if (range === undefined) {
      const bytes = await this.bytes()
      yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      return
    }
    const end = this.info.size ?? Number.POSITIVE_INFINITY
    for (let offset = 0; offset < end;) {
      checkFsAborted(this.exec.signal, 'read')
      const length = Math.min(blockBytes, end - offset)
      const bytes = await range(this.target, { offset, length }, this.exec.signal)
      // Never more than asked for, whatever the provider returns; a short range is the end of the file.
      const got = Math.min(bytes.byteLength, length)
      if (got > 0) yield Buffer.from(bytes.buffer, bytes.byteOffset, got)
      offset += got
      if (got < length) return
    }
  }

  private async readWhole(): Promise<Uint8Array> {
    const parts: Buffer[] = []
    for await (const block of this.chunks()) parts.push(block)
    return parts.length === 1 ? parts[0] as Buffer : Buffer.concat(parts)
  }

  /**
   * The file in order: 1 MiB local blocks up to the size when opened, else the provider's; `reuse` shares one buffer
   * (a fresh one per block costs ~40%).
   */
  async *chunks(blockBytes = BLOCK, reuse = false): AsyncIterable<Buffer> {
    const handle = this.handle
    if (handle === undefined) {
      yield * this.providerChunks(blockBytes)
      return
    }
    const end = this.info.size ?? 0
    const shared = reuse ? Buffer.allocUnsafe(blockBytes) : undefined
    let position = 0
    while (position < end) {
      checkFsAborted(this.exec.signal, 'read')
      const block = shared ?? Buffer.allocUnsafe(blockBytes)
      const want = Math.min(blockBytes, end - position)
      let filled = 0
      while (filled < want) {
        const { bytesRead } = await handle.read(block, filled, want - filled, position + filled)
        if (bytesRead === 0) break
        filled += bytesRead
      }
      if (filled > 0) yield block.subarray(0, filled)
      position += filled
      // Shorter than asked: the file was cut while being read; what is there is all there is.
      if (filled < want) return
    }
  }
}
