/** The image reader: bytes that match the extension and decode, attached (fitted to the store) when the route takes images. */

import { basename, extname } from 'node:path'
import sharp, { type Sharp } from 'sharp'
import type { Context } from '@deepseek-ai/cordis'
import { AttachmentError, type AttachmentStore, type ImageMediaType } from '@deepseek-ai/dsh-attachment'
import { FsError } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-llm'
import { checkFsAborted, echo } from '@gencode-ai/dsh-tool-common'
import { bmpInfo, decodeBmp } from './bmp.ts'
import type { ReadRequest, ReadResult } from '../../reader.ts'
import { FORMAT_NAMES, type ImageFormat, imageFormatForPath, sniffImage } from './sniff.ts'
import type { Attached } from './value.ts'

/** The most pixels decoded: sharp's own input limit, applied to BMP too. */
const MAX_DECODE_PIXELS = 0x3fff * 0x3fff

/** The widest BMP decoded: it is decoded a row at a time, so a row's width bounds the memory a decode takes. */
const MAX_BMP_WIDTH = 65_536

/** Whether the calling route declares image input (the gate first-party read_image uses). */
export async function routeTakesImages(ctx: Context, exec: ToolExecution): Promise<boolean> {
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

function corrupt(displayPath: string, format: ImageFormat, cause: unknown): FsError {
  const detail = (cause instanceof Error ? cause.message.split('\n')[0] ?? '' : String(cause)).replace(/[\s:]+$/u, '')
  return new FsError(`cannot read ${echo(displayPath)}: corrupt ${FORMAT_NAMES[format]} image (${detail}) — regenerate the image, or read another file`, 'FS_NOT_TEXT', { cause })
}

/** An image over the decode limit: named, with the numbers, not called corrupt. */
function tooManyPixels(displayPath: string, format: ImageFormat, width: number, height: number): FsError {
  return new FsError(`cannot read ${echo(displayPath)}: the ${FORMAT_NAMES[format]} image is ${width}x${height} px (${width * height} pixels), more than the ${MAX_DECODE_PIXELS}-pixel limit read_file decodes — scale it down below that`, 'FS_TOO_LARGE')
}

export type Inspected = {
  /** As displayed: after the EXIF orientation. */
  width: number
  height: number
  frames: number
  /** Whether the stored pixels must be re-encoded to attach (rotated, or not sRGB). */
  convert: boolean
}

/** Decode fully (to a thumbnail, bounding memory) to catch a broken file; a BMP by its header (pixels only to attach). */
export async function inspect(displayPath: string, format: ImageFormat, data: Uint8Array): Promise<Inspected> {
  let metadata
  try {
    if (format === 'bmp') {
      const { width, height } = bmpInfo(data)
      if (width * height > MAX_DECODE_PIXELS) throw tooManyPixels(displayPath, format, width, height)
      if (width > MAX_BMP_WIDTH) {
        throw new FsError(`cannot read ${echo(displayPath)}: the BMP image is ${width} px wide, more than the ${MAX_BMP_WIDTH} px read_file decodes — scale it down below that`, 'FS_TOO_LARGE')
      }
      return { width, height, frames: 1, convert: false }
    }
    // The header alone (sharp's limit would call a large image corrupt); the limit is checked below, by name.
    metadata = await sharp(data, { failOn: 'error', limitInputPixels: false }).metadata()
  } catch (error) {
    throw error instanceof FsError ? error : corrupt(displayPath, format, error)
  }
  const { width, height, pages, orientation, space } = metadata
  if (width === undefined || height === undefined) throw corrupt(displayPath, format, new Error('no dimensions'))
  if (width * height > MAX_DECODE_PIXELS) throw tooManyPixels(displayPath, format, width, height)
  try {
    await sharp(data, { failOn: 'error' }).resize(16, 16, { fit: 'inside' }).raw().toBuffer()
  } catch (error) {
    throw corrupt(displayPath, format, error)
  }
  // Orientations 5-8 turn the image a quarter: displayed width and height swap.
  const turned = orientation !== undefined && orientation >= 5 && orientation <= 8
  const convert = (orientation !== undefined && orientation > 1) || !['srgb', 'rgb', 'b-w', 'rgb16', 'grey16'].includes(space ?? 'srgb')
  return { width: turned ? height : width, height: turned ? width : height, frames: Math.max(1, pages ?? 1), convert }
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

/** A BMP's pixels for sharp, which cannot read BMP (checked against the limit by inspect), box-averaged by `shrink` to bound memory. */
async function bmpSource(displayPath: string, data: Uint8Array, shrink: number, signal: AbortSignal): Promise<Sharp> {
  try {
    const { pixels, width, height, channels } = await decodeBmp(data, bmpInfo(data), shrink, signal)
    return sharp(pixels, { raw: { width, height, channels } })
  } catch (error) {
    checkFsAborted(signal, 'read')
    throw corrupt(displayPath, 'bmp', error)
  }
}

/** The type to attach as: the image's own when the store admits it (never BMP), else the first admitted of PNG, JPEG, WebP. */
function attachType(format: ImageFormat, admitted: readonly ImageMediaType[]): ImageMediaType | undefined {
  const own = `image/${format}` as ImageMediaType
  if (format !== 'bmp' && admitted.includes(own)) return own
  return (['image/png', 'image/jpeg', 'image/webp'] as const).find((type) => admitted.includes(type))
}

export async function readImage({ source, call: { ctx, exec } }: ReadRequest): Promise<ReadResult> {
  const { target } = source
  const data = await source.bytes()
  const named = imageFormatForPath(target.displayPath)
  const format = sniffImage(data)
  if (format === undefined || (named !== undefined && format !== named)) {
    const what = format === undefined ? 'not an image in any format read_file knows' : `a ${FORMAT_NAMES[format]} image; rename it to match`
    const says = named === undefined ? 'nothing' : FORMAT_NAMES[named]
    const ext = extname(target.displayPath).toLowerCase()
    throw new FsError(`cannot read ${echo(target.displayPath)}: the ${ext} extension says ${says}, but the bytes are ${what}`, 'FS_NOT_TEXT')
  }
  const decoded = await inspect(target.displayPath, format, data)
  const { width, height, frames } = decoded
  const animation = frames > 1 ? { animated: { frames, shown: 1 } } : {}
  const base = { kind: 'image' as const, path: target.displayPath, format, width, height, bytes: data.byteLength, ...animation }
  const attachments = ctx.get('attachments')
  if (attachments === undefined) return { value: { ...base, attached: null, reason: 'no-attachment-store' }, observe: true }
  if (!await routeTakesImages(ctx, exec)) return { value: { ...base, attached: null, reason: 'no-image-input' }, observe: true }
  checkFsAborted(exec.signal, 'read')
  const limits = attachments.imageLimits
  const byteCap = Math.min(limits.maxImageBytes, limits.maxMessageImageBytes)
  const name = basename(target.displayPath)
  const attached = await attachImage(attachments, target.displayPath, name, data, format, decoded, byteCap, exec.signal)
  return { value: { ...base, attached }, observe: true }
}

/** Fit an inspected image to the store (re-encoded when it must be) and save it; `byteCap` bounds the encoded bytes. */
export async function attachImage(attachments: AttachmentStore, displayPath: string, name: string, data: Uint8Array, format: ImageFormat,
  decoded: Inspected, byteCap: number, signal: AbortSignal): Promise<Attached> {
  const limits = attachments.imageLimits
  const mediaType = attachType(format, limits.mediaTypes)
  if (mediaType === undefined) {
    throw new FsError(`cannot read ${echo(displayPath)}: the attachment store admits none of PNG, JPEG or WebP (it takes ${limits.mediaTypes.join(', ')})`, 'FS_IO_ERROR')
  }
  const { maxImageDimension: side, maxImagePixels: pixels } = limits
  // The largest scale (≤ 1) that fits the store's per-side and pixel limits.
  let scale = Math.min(1, side / decoded.width, side / decoded.height, Math.sqrt(pixels / (decoded.width * decoded.height)))
  let out: Uint8Array = data
  // One frame of an animation, turned upright and in sRGB: what the text says is shown.
  if (mediaType !== `image/${format}` || scale < 1 || data.byteLength > byteCap || decoded.frames > 1 || decoded.convert) {
    // A BMP is decoded no larger than needed: whole blocks of its pixels averaged down towards the fitted size.
    const image = format === 'bmp' ? await bmpSource(displayPath, data, Math.floor(1 / scale), signal)
      : sharp(data, { failOn: 'error', autoOrient: true }).toColourspace('srgb')
    // Re-encode, shrinking further until the encoded bytes also fit the store.
    for (let attempt = 0; ; attempt++) {
      const width = Math.max(1, Math.floor(decoded.width * scale))
      const height = Math.max(1, Math.floor(decoded.height * scale))
      out = await encode(image, width, height, mediaType)
      if (out.byteLength <= byteCap) break
      if (attempt === 8) {
        throw new FsError(`cannot read ${echo(displayPath)}: the image does not fit the attachment store's ${byteCap}-byte limit even downscaled`, 'FS_TOO_LARGE')
      }
      scale *= 0.7
    }
  }
  const ref = await attachments.saveImage({ data: out, mediaType, name }).catch((error: unknown) => {
    if (!(error instanceof AttachmentError)) throw error
    throw new FsError(`cannot read ${echo(displayPath)}: the attachment store refused the image (${error.code}: ${error.message})`, 'FS_IO_ERROR', { cause: error })
  })
  const { attachmentId, mediaType: savedType, bytes, width, height, name: saved } = ref
  return { attachment_id: String(attachmentId), media_type: savedType, bytes, width, height, ...saved === undefined ? {} : { name: saved } }
}
