/**
 * The image reader: the bytes must be the format an image extension names (magic bytes), decode
 * cleanly, and report their dimensions. When the calling route declares image input and an
 * attachment store is composed, the image is fitted to the store's limits (in a type the store
 * admits; BMP, which sharp cannot read, decoded by bmp-ts) and saved, and the result carries an
 * image block; otherwise it is a text description, not an error.
 */

import { basename, extname } from 'node:path'
import sharp, { type Sharp } from 'sharp'
import { decode as decodeBmp } from 'bmp-ts'
import type { Context } from '@deepseek-ai/cordis'
import { AttachmentError, type ImageAttachmentLimits, type ImageMediaType } from '@deepseek-ai/dsh-attachment'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-llm'
import type { ReadRequest, ReadResult } from './reader.ts'

/**
 * The most BMP pixels decoded: sharp's own input limit (0x3FFF squared), so a BMP gets the same
 * ceiling as every other format.
 */
const MAX_DECODE_PIXELS = 0x3fff * 0x3fff

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'bmp'

const IMAGE_EXTENSIONS: Readonly<Record<string, ImageFormat>> = {
  '.png': 'png', '.jpg': 'jpeg', '.jpeg': 'jpeg', '.gif': 'gif', '.webp': 'webp', '.bmp': 'bmp',
}

const FORMAT_NAMES: Readonly<Record<ImageFormat, string>> = {
  png: 'PNG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP', bmp: 'BMP',
}

export function formatName(format: ImageFormat): string {
  return FORMAT_NAMES[format]
}

export function imageFormatForPath(path: string): ImageFormat | undefined {
  const ext = extname(path).toLowerCase()
  return Object.hasOwn(IMAGE_EXTENSIONS, ext) ? IMAGE_EXTENSIONS[ext] : undefined
}

/** The format the bytes are, by magic number. */
export function sniffImage(bytes: Uint8Array): ImageFormat | undefined {
  const at = (offset: number, ...values: number[]) => values.every((value, i) => bytes[offset + i] === value)
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png'
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg'
  if (at(0, 0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'gif'
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp'
  if (at(0, 0x42, 0x4d)) return 'bmp'
  return undefined
}

type AttachedImage = {
  attachmentId: string
  mediaType: ImageMediaType
  bytes: number
  width: number
  height: number
  name?: string
}

type NotAttachedReason = 'no-image-input' | 'no-attachment-store'

export type ImageRead = {
  format: ImageFormat
  width: number
  height: number
  /** The file's size in bytes. */
  bytes: number
  attached: AttachedImage | null
  reason?: NotAttachedReason
}

/** Whether the calling route declares image input (the gate first-party read_image uses). */
async function routeTakesImages(ctx: Context, exec: ToolExecution): Promise<boolean> {
  const routed = exec.agent?.session.requestHeader()?.config
  const provider = routed?.provider ?? exec.agent?.options.provider
  const model = routed?.model ?? exec.agent?.options.model
  const llm = ctx.get('llm')
  if (provider === undefined || model === undefined || llm === undefined) return false
  try {
    const info = await llm.resolveModelInfo(provider, model, exec.signal)
    return info.inputModalities?.includes('image') === true
  } catch {
    return false
  }
}

function corrupt(target: FsTarget, format: ImageFormat, cause: unknown): FsError {
  const detail = (cause instanceof Error ? cause.message.split('\n')[0] ?? '' : String(cause)).replace(/[\s:]+$/u, '')
  return new FsError(`cannot read "${target.displayPath}": corrupt ${formatName(format)} image (${detail}) — regenerate the image, or read another file`, 'FS_NOT_TEXT', { cause })
}

/** A BMP's dimensions, and whether its pixel data is all there (uncompressed BMPs), from the header alone. */
function bmpHeader(data: Uint8Array): { width: number, height: number } {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  if (bytes.length < 34) throw new Error('truncated BMP header')
  const width = bytes.readInt32LE(18)
  const height = Math.abs(bytes.readInt32LE(22))
  const bpp = bytes.readUInt16LE(28)
  const compression = bytes.readUInt32LE(30)
  if (width <= 0 || height === 0) throw new Error('invalid BMP dimensions')
  const rle = compression === 1 || compression === 2
  if (!rle && bytes.length < bytes.readUInt32LE(10) + Math.floor((bpp * width + 31) / 32) * 4 * height) throw new Error('truncated BMP pixel data')
  return { width, height }
}

/**
 * Decode fully (to a thumbnail, to bound memory) so a truncated or broken file is caught. A BMP
 * is checked from its header alone (its pixels are decoded only when attached).
 */
async function inspect(target: FsTarget, format: ImageFormat, data: Uint8Array): Promise<{ width: number, height: number }> {
  try {
    if (format === 'bmp') return bmpHeader(data)
    const metadata = await sharp(data, { failOn: 'error' }).metadata()
    if (metadata.width === undefined || metadata.height === undefined) throw new Error('no dimensions')
    await sharp(data, { failOn: 'error' }).resize(16, 16, { fit: 'inside' }).raw().toBuffer()
    return { width: metadata.width, height: metadata.height }
  } catch (error) {
    throw corrupt(target, format, error)
  }
}

/** The largest scale (≤ 1) that fits the store's per-side and pixel limits. */
function fitScale(width: number, height: number, limits: ImageAttachmentLimits): number {
  const { maxImageDimension: side, maxImagePixels: pixels } = limits
  return Math.min(1, side / width, side / height, Math.sqrt(pixels / (width * height)))
}

async function encode(source: Sharp, width: number, height: number, mediaType: ImageMediaType): Promise<Buffer> {
  const resized = source.clone().resize(width, height, { fit: 'fill' })
  switch (mediaType) {
    case 'image/jpeg': return resized.flatten({ background: '#ffffff' }).jpeg({ quality: 85 }).toBuffer()
    case 'image/webp': return resized.webp({ quality: 85 }).toBuffer()
    case 'image/gif': return resized.gif().toBuffer()
    default: return resized.png({ compressionLevel: 9 }).toBuffer()
  }
}

/**
 * A BMP's pixels for sharp, refused before allocating when there are more than sharp would take.
 * bmp-ts leaves alpha 0 where the file has none: an all-zero alpha channel means opaque.
 */
function bmpSource(target: FsTarget, data: Uint8Array): Sharp {
  const { width, height } = bmpHeader(data)
  if (width * height > MAX_DECODE_PIXELS) {
    throw new FsError(
      `cannot read "${target.displayPath}": the BMP image is ${width}x${height} px (${width * height} pixels), more than the ${MAX_DECODE_PIXELS} read_file decodes to attach — scale it down below that`,
      'FS_TOO_LARGE',
    )
  }
  let rgba: Buffer
  try {
    rgba = decodeBmp(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { toRGBA: true }).data
  } catch (error) {
    throw corrupt(target, 'bmp', error)
  }
  let alpha = false
  for (let i = 3; i < rgba.length && !alpha; i += 4) alpha = rgba[i] !== 0
  const image = sharp(rgba, { raw: { width, height, channels: 4 } })
  return alpha ? image : image.removeAlpha()
}

/** The type to attach as: the image's own when the store admits it (never BMP), else the first admitted of PNG, JPEG, WebP. */
function attachType(format: ImageFormat, admitted: readonly ImageMediaType[]): ImageMediaType | undefined {
  const own = `image/${format}` as ImageMediaType
  if (format !== 'bmp' && admitted.includes(own)) return own
  return (['image/png', 'image/jpeg', 'image/webp'] as const).find((type) => admitted.includes(type))
}

export async function readImage({ source }: ReadRequest): Promise<ReadResult> {
  const { ctx, exec, target } = source
  const data = await source.bytes()
  const named = imageFormatForPath(target.displayPath)
  const format = sniffImage(data)
  if (format === undefined || (named !== undefined && format !== named)) {
    const ext = extname(target.displayPath).toLowerCase()
    const what = format === undefined ? 'not an image in any format read_file knows' : `a ${formatName(format)} image; rename it to match`
    const says = named === undefined ? 'nothing' : formatName(named)
    throw new FsError(`cannot read "${target.displayPath}": the ${ext} extension says ${says}, but the bytes are ${what}`, 'FS_NOT_TEXT')
  }
  const image = await describeOrAttach(ctx, exec, target, format, data)
  return { value: { kind: 'image', path: target.displayPath, ...image }, observe: true }
}

async function describeOrAttach(
  ctx: Context, exec: ToolExecution, target: FsTarget, format: ImageFormat, data: Uint8Array,
): Promise<ImageRead> {
  const decoded = await inspect(target, format, data)
  const base = { format, width: decoded.width, height: decoded.height, bytes: data.byteLength }
  const attachments = ctx.get('attachments')
  if (attachments === undefined) return { ...base, attached: null, reason: 'no-attachment-store' }
  if (!await routeTakesImages(ctx, exec)) return { ...base, attached: null, reason: 'no-image-input' }
  if (exec.signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')

  const limits = attachments.imageLimits
  const byteCap = Math.min(limits.maxImageBytes, limits.maxMessageImageBytes)
  const mediaType = attachType(format, limits.mediaTypes)
  if (mediaType === undefined) {
    throw new FsError(`cannot read "${target.displayPath}": the attachment store admits none of PNG, JPEG or WebP (it takes ${limits.mediaTypes.join(', ')})`, 'FS_IO_ERROR')
  }
  let scale = fitScale(decoded.width, decoded.height, limits)
  let out: Uint8Array = data
  if (mediaType !== `image/${format}` || scale < 1 || data.byteLength > byteCap) {
    const source = format === 'bmp' ? bmpSource(target, data) : sharp(data, { failOn: 'error' })
    // Re-encode, shrinking further until the encoded bytes also fit the store.
    for (let attempt = 0; ; attempt++) {
      const width = Math.max(1, Math.floor(decoded.width * scale))
      const height = Math.max(1, Math.floor(decoded.height * scale))
      out = await encode(source, width, height, mediaType)
      if (out.byteLength <= byteCap) break
      if (attempt === 8) {
        throw new FsError(`cannot read "${target.displayPath}": the image does not fit the attachment store's ${byteCap}-byte limit even downscaled`, 'FS_TOO_LARGE')
      }
      scale *= 0.7
    }
  }
  try {
    const ref = await attachments.saveImage({ data: out, mediaType, name: basename(target.displayPath) })
    return {
      ...base,
      attached: {
        attachmentId: String(ref.attachmentId),
        mediaType: ref.mediaType,
        bytes: ref.bytes,
        width: ref.width,
        height: ref.height,
        ...ref.name === undefined ? {} : { name: ref.name },
      },
    }
  } catch (error) {
    if (error instanceof AttachmentError) {
      throw new FsError(`cannot read "${target.displayPath}": the attachment store refused the image (${error.code}: ${error.message})`, 'FS_IO_ERROR', { cause: error })
    }
    throw error
  }
}
