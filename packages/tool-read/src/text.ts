/**
 * Text reads: UTF-8 through the provider's stream (or the proven-identical local fast path);
 * anything the provider rejects as not UTF-8 gets one more chance as UTF-16 with a BOM, read
 * whole through ctx.fs.readBytes (the provider's text reads are UTF-8 only).
 */

import { open } from 'node:fs/promises'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsInfo, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { localPath } from './local.ts'
import { NotText, scanLocalText } from './text-local.ts'
import { scanTextChunks } from './text-stream.ts'
import type { TextWindow, WindowRequest } from './window.ts'

export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be'

export type TextRead = TextWindow & {
  encoding: TextEncoding
}

export function binaryError(target: FsTarget): FsError {
  return new FsError(
    `cannot read "${target.displayPath}": binary file (NUL bytes or not UTF-8/UTF-16 text); read_file reads text, png/jpg/gif/webp/bmp images and .ipynb notebooks`,
    'FS_NOT_TEXT',
  )
}

/**
 * UTF-16 is decoded whole, so a non-UTF-8 file over maxFileBytes is not read. Whether it starts
 * with a UTF-16 BOM is not known either: a provider reads a file only whole (readBytes has no
 * range), and the local fast path must answer exactly as the provider does. Say both outcomes.
 */
function tooLargeToCheck(target: FsTarget, size: number | undefined, maxFileBytes: number): FsError {
  const bytes = size === undefined ? '' : ` of ${size} bytes`
  return new FsError(
    `cannot read "${target.displayPath}": not UTF-8 text, and a file${bytes} over maxFileBytes (${maxFileBytes}) is not read whole to check for UTF-16 — if it is UTF-16 text, read a smaller file, convert it to UTF-8 (read at any size), or raise maxFileBytes in tool-read's config; otherwise it is a binary file`,
    'FS_TOO_LARGE',
  )
}

function isNotText(error: unknown): boolean {
  return error instanceof NotText || (error instanceof FsError && error.code === 'FS_NOT_TEXT')
}

function bomEncoding(bytes: Uint8Array): TextEncoding | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le'
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be'
  return undefined
}

export async function readText(
  ctx: Context,
  exec: ToolExecution,
  target: FsTarget,
  info: FsInfo,
  request: WindowRequest,
  maxFileBytes: number,
  options: { fastPath?: boolean } = {},
): Promise<TextRead> {
  const local = options.fastPath === false ? undefined : await localPath(ctx, target)
  try {
    const window = local !== undefined
      ? await scanLocalText(local, request, info.size, exec.signal)
      : await scanTextChunks(await ctx.fs.streamText(target, exec.signal), request, info.size, exec.signal)
    return { ...window, encoding: 'utf-8' }
  } catch (error) {
    if (!isNotText(error)) throw error
  }
  if (info.size !== undefined && info.size > maxFileBytes) throw tooLargeToCheck(target, info.size, maxFileBytes)
  // Without a BOM it is binary: the fast path may see that from two bytes instead of all of them.
  if (local !== undefined && bomEncoding(await firstBytes(local)) === undefined) throw binaryError(target)
  let bytes: Uint8Array
  try {
    bytes = await ctx.fs.readBytes(target, exec.signal, maxFileBytes)
  } catch (error) {
    // It grew past the limit after the stat.
    if (error instanceof FsError && error.code === 'FS_TOO_LARGE') throw tooLargeToCheck(target, undefined, maxFileBytes)
    throw error
  }
  const encoding = bomEncoding(bytes)
  if (encoding === undefined) throw binaryError(target)
  let text: string
  try {
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes)
  } catch {
    throw binaryError(target)
  }
  return { ...await scanTextChunks([text], request, undefined, exec.signal), encoding }
}

async function firstBytes(path: string): Promise<Uint8Array> {
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.alloc(2)
    const { bytesRead } = await handle.read(buffer, 0, 2, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}
