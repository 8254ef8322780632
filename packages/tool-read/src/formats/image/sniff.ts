/** The image room's sniff: formats by magic bytes and by extension, and their names. */

import { extname } from 'node:path'
import type { ImageValue } from './value.ts'

export type ImageFormat = ImageValue['format']

const IMAGE_EXTENSIONS: Readonly<Record<string, ImageFormat>> = {
  '.png': 'png', '.jpg': 'jpeg', '.jpeg': 'jpeg', '.gif': 'gif', '.webp': 'webp', '.bmp': 'bmp',
}

export const FORMAT_NAMES: Readonly<Record<ImageFormat, string>> = {
  png: 'PNG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP', bmp: 'BMP',
}

export function imageFormatForPath(path: string): ImageFormat | undefined {
  const ext = extname(path).toLowerCase()
  return Object.hasOwn(IMAGE_EXTENSIONS, ext) ? IMAGE_EXTENSIONS[ext] : undefined
}

export function sniffImage(bytes: Uint8Array): ImageFormat | undefined {
  const at = (offset: number, ...values: number[]) => values.every((value, i) => bytes[offset + i] === value)
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png'
  if (at(0, 0xff, 0xd8, 0xff)) return 'jpeg'
  if (at(0, 0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'gif'
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'webp'
  if (at(0, 0x42, 0x4d)) return 'bmp'
  return undefined
}
