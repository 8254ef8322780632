/**
 * A small BMP decoder (sharp's libvips build reads no BMP): uncompressed 1/4/8-bit palette,
 * 16/24/32-bit and BI_BITFIELDS, bottom-up or top-down, to RGBA for transcoding to PNG.
 * RLE and embedded JPEG/PNG BMPs are refused with a clear reason. The header alone is enough to
 * validate a file and report its size; the pixels are decoded only for an image being attached.
 */

import { FsError } from '@deepseek-ai/dsh-fs'

export class BmpError extends Error {}

/**
 * The most pixels decoded: sharp's own input limit (0x3FFF squared), so a BMP gets the same
 * ceiling as every other format. A 1-bit BMP of 33 MB reaches it, and its RGBA is ~1 GB.
 */
export const MAX_DECODE_PIXELS = 0x3fff * 0x3fff

/** Pixels decoded between two yields to the event loop (where an abort can land). */
const PIXELS_PER_SLICE = 1 << 20

export interface BmpHeader {
  width: number
  height: number
}

export interface DecodedBmp extends BmpHeader {
  rgba: Buffer
}

interface Layout extends BmpHeader {
  topDown: boolean
  bpp: number
  compression: number
  dataOffset: number
  dibSize: number
  colors: number
}

function layout(data: Uint8Array): Layout {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  if (data.length < 26 || data[0] !== 0x42 || data[1] !== 0x4d) throw new BmpError('not a BMP file')
  const dataOffset = view.getUint32(10, true)
  const dibSize = view.getUint32(14, true)
  if (dibSize === 12) {
    return {
      width: view.getUint16(18, true),
      height: view.getUint16(20, true),
      topDown: false,
      bpp: view.getUint16(24, true),
      compression: 0,
      dataOffset,
      dibSize,
      colors: 0,
    }
  }
  if (dibSize < 40 || data.length < 14 + dibSize) throw new BmpError('truncated BMP header')
  const rawHeight = view.getInt32(22, true)
  return {
    width: view.getInt32(18, true),
    height: Math.abs(rawHeight),
    topDown: rawHeight < 0,
    bpp: view.getUint16(28, true),
    compression: view.getUint32(30, true),
    dataOffset,
    dibSize,
    colors: view.getUint32(46, true),
  }
}

/** Validate everything the header says (dimensions, compression, depth, data length) without decoding. */
function checked(data: Uint8Array): Layout {
  const info = layout(data)
  const { width, height, bpp, compression } = info
  if (width <= 0 || height <= 0) throw new BmpError('invalid BMP dimensions')
  if (compression === 1 || compression === 2) throw new BmpError('RLE-compressed BMP is not supported')
  if (compression !== 0 && compression !== 3 && compression !== 6) throw new BmpError(`BMP compression ${compression} is not supported`)
  if (![1, 4, 8, 16, 24, 32].includes(bpp)) throw new BmpError(`${bpp}-bit BMP is not supported`)
  if (info.dataOffset + stride(info) * height > data.length) throw new BmpError('truncated BMP pixel data')
  return info
}

function stride({ bpp, width }: Layout): number {
  return Math.floor((bpp * width + 31) / 32) * 4
}

export function bmpHeader(data: Uint8Array): BmpHeader {
  const { width, height } = checked(data)
  return { width, height }
}

function maskShift(mask: number): { shift: number, max: number } {
  if (mask === 0) return { shift: 0, max: 0 }
  let shift = 0
  while (((mask >>> shift) & 1) === 0) shift++
  return { shift, max: mask >>> shift }
}

/**
 * Decode to RGBA. The caller checks MAX_DECODE_PIXELS first (this refuses more as a backstop);
 * the loop yields every ~1M pixels and stops with FS_ABORTED once `signal` fires.
 */
export async function decodeBmp(data: Uint8Array, signal: AbortSignal): Promise<DecodedBmp> {
  const info = checked(data)
  const { width, height, bpp, compression } = info
  if (width * height > MAX_DECODE_PIXELS) throw new BmpError(`${width}x${height} BMP is over ${MAX_DECODE_PIXELS} pixels`)
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const rowBytes = stride(info)

  const palette: number[][] = []
  if (bpp <= 8) {
    const entry = info.dibSize === 12 ? 3 : 4
    const count = info.colors || 1 << bpp
    const start = 14 + info.dibSize
    for (let i = 0; i < count && start + i * entry + 2 < data.length; i++) {
      const at = start + i * entry
      palette.push([data[at + 2]!, data[at + 1]!, data[at]!])
    }
  }
  let masks = bpp === 16 ? [0x7c00, 0x03e0, 0x001f, 0] : [0xff0000, 0xff00, 0xff, 0]
  if (compression === 3 || compression === 6) {
    // Masks follow a 40-byte header, or sit inside a V2+ header at the same offset.
    masks = [view.getUint32(54, true), view.getUint32(58, true), view.getUint32(62, true),
      compression === 6 || info.dibSize >= 56 ? view.getUint32(66, true) : 0]
  }
  const channels = masks.map(maskShift)

  const rgba = Buffer.alloc(width * height * 4)
  const rowsPerSlice = Math.max(1, Math.floor(PIXELS_PER_SLICE / width))
  for (let y = 0; y < height; y++) {
    if (y % rowsPerSlice === 0) {
      if (y > 0) await new Promise<void>((resolve) => setImmediate(resolve))
      if (signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
    }
    const row = info.dataOffset + (info.topDown ? y : height - 1 - y) * rowBytes
    for (let x = 0; x < width; x++) {
      const out = (y * width + x) * 4
      if (bpp <= 8) {
        const bit = x * bpp
        const byte = data[row + (bit >> 3)]!
        const index = (byte >> (8 - bpp - (bit & 7))) & ((1 << bpp) - 1)
        const color = palette[index] ?? [0, 0, 0]
        rgba[out] = color[0]!
        rgba[out + 1] = color[1]!
        rgba[out + 2] = color[2]!
        rgba[out + 3] = 255
      } else if (bpp === 24) {
        const at = row + x * 3
        rgba[out] = data[at + 2]!
        rgba[out + 1] = data[at + 1]!
        rgba[out + 2] = data[at]!
        rgba[out + 3] = 255
      } else {
        const value = bpp === 16 ? view.getUint16(row + x * 2, true) : view.getUint32(row + x * 4, true)
        for (let c = 0; c < 4; c++) {
          const { shift, max } = channels[c]!
          rgba[out + c] = max === 0 ? (c === 3 ? 255 : 0) : Math.round((((value & masks[c]!) >>> shift) / max) * 255)
        }
      }
    }
  }
  return { width, height, rgba }
}
