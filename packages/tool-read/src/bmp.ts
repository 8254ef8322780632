/** A BMP decoder: Windows 3.x–V5 and OS/2 1.x/2.x headers; 1/4/8-bit palettes, RLE4/RLE8, 16/24/32-bit (bitfields). */

/** A BMP this decoder cannot take, with the reason as the message. */
export class BmpError extends Error {}

const RGB = 0
const RLE8 = 1
const RLE4 = 2
const BITFIELDS = 3
const ALPHABITFIELDS = 6

export type BmpInfo = {
  width: number
  height: number
  bpp: number
  compression: number
  topDown: boolean
  dataOffset: number
  /** Palette entries (1/4/8-bit) as 0xRRGGBB; empty otherwise. */
  palette: number[]
  /** Red, green, blue, alpha masks of 16/32-bit pixels (alpha 0: opaque). */
  masks: [number, number, number, number]
}

const COMPRESSIONS: Readonly<Record<number, string>> = { 4: 'JPEG', 5: 'PNG' }

/** The header, palette and masks, checking that an uncompressed image's pixel data is all there. */
export function bmpInfo(data: Uint8Array): BmpInfo {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  if (bytes.length < 26) throw new BmpError('truncated BMP header')
  const headerSize = bytes.readUInt32LE(14)
  const core = headerSize === 12
  if (!core && ![16, 40, 52, 56, 64, 108, 124].includes(headerSize)) throw new BmpError(`unknown BMP header size ${headerSize}`)
  if (bytes.length < 14 + Math.max(headerSize, 16)) throw new BmpError('truncated BMP header')
  const width = core ? bytes.readUInt16LE(18) : bytes.readInt32LE(18)
  const rawHeight = core ? bytes.readUInt16LE(20) : bytes.readInt32LE(22)
  const bpp = core ? bytes.readUInt16LE(24) : bytes.readUInt16LE(28)
  const compression = headerSize >= 40 ? bytes.readUInt32LE(30) : RGB
  if (width <= 0 || rawHeight === 0 || rawHeight === -0x80000000) throw new BmpError(`invalid BMP dimensions ${width}x${rawHeight}`)
  // OS/2 2.x (64-byte header) numbers Huffman 1D and RLE24 as 3 and 4.
  if (headerSize === 64 && compression >= BITFIELDS) throw new BmpError(`OS/2 BMP compression ${compression} is not supported`)
  const known = compression === RGB || compression === BITFIELDS || compression === ALPHABITFIELDS
    || (compression === RLE8 && bpp === 8) || (compression === RLE4 && bpp === 4)
  if (!known) throw new BmpError(`${COMPRESSIONS[compression] ?? `compression ${compression}`} with ${bpp} bits per pixel is not supported`)
  if (![1, 4, 8, 16, 24, 32].includes(bpp)) throw new BmpError(`${bpp} bits per pixel is not supported`)

  let masks: [number, number, number, number] = bpp === 16 ? [0x7c00, 0x3e0, 0x1f, 0] : [0xff0000, 0xff00, 0xff, 0]
  let tableAt = 14 + headerSize
  if (compression === BITFIELDS || compression === ALPHABITFIELDS) {
    // A 40-byte header has its masks after it; V2+ headers hold them (V3+ with alpha).
    const inHeader = headerSize >= 52
    const at = inHeader ? 54 : tableAt
    const count = inHeader ? (headerSize >= 56 ? 4 : 3) : compression === ALPHABITFIELDS ? 4 : 3
    if (bytes.length < at + count * 4) throw new BmpError('truncated BMP bitfields')
    masks = [0, 1, 2, 3].map((i) => i < count ? bytes.readUInt32LE(at + i * 4) : 0) as typeof masks
    if (!inHeader) tableAt += count * 4
  }
  const dataOffset = bytes.readUInt32LE(10)
  const palette: number[] = []
  if (bpp <= 8) {
    const entry = core ? 3 : 4
    const used = headerSize >= 40 ? bytes.readUInt32LE(46) : 0
    const fits = Math.floor((Math.min(dataOffset, bytes.length) - tableAt) / entry)
    const count = Math.min(used === 0 || used > 1 << bpp ? 1 << bpp : used, fits)
    for (let i = 0; i < count; i++) {
      const at = tableAt + i * entry
      palette.push(((bytes[at + 2] ?? 0) << 16) | ((bytes[at + 1] ?? 0) << 8) | (bytes[at] ?? 0))
    }
    if (palette.length === 0) throw new BmpError('the BMP has no palette')
  }
  const height = Math.abs(rawHeight)
  if (compression !== RLE8 && compression !== RLE4) {
    // The last row's padding may be missing.
    const end = dataOffset + stride(width, bpp) * (height - 1) + Math.ceil((width * bpp) / 8)
    if (bytes.length < end) throw new BmpError('truncated BMP pixel data')
  } else if (bytes.length <= dataOffset) {
    throw new BmpError('truncated BMP pixel data')
  }
  return { width, height, bpp, compression, topDown: rawHeight < 0, dataOffset, palette, masks }
}

function stride(width: number, bpp: number): number {
  return Math.floor((bpp * width + 31) / 32) * 4
}

/** One channel of a masked pixel scaled to 0-255 (5 bits: v * 255 / 31, as Pillow does). */
function channel(mask: number): (pixel: number) => number {
  if (mask === 0) return () => 255
  let shift = 0
  while (((mask >>> shift) & 1) === 0) shift++
  const max = mask >>> shift
  return max === 255 ? (pixel) => (pixel & mask) >>> shift : (pixel) => Math.floor((((pixel & mask) >>> shift) * 255) / max)
}

/** The pixels as top-down rows of RGB, or RGBA when an alpha mask is in use and not all zero. */
export function decodeBmp(data: Uint8Array, info: BmpInfo): { pixels: Buffer, channels: 3 | 4 } {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const { width, height, bpp, compression, topDown, dataOffset, palette, masks } = info
  const alpha = bpp >= 16 && masks[3] !== 0 && compression !== RGB
  const channels = alpha ? 4 : 3
  const out = Buffer.alloc(width * height * channels)
  const row = (y: number) => (topDown ? y : height - 1 - y) * width * channels
  const put = (at: number, rgb: number) => {
    out[at] = rgb >>> 16
    out[at + 1] = (rgb >>> 8) & 0xff
    out[at + 2] = rgb & 0xff
  }
  const colour = (index: number) => palette[index] ?? 0

  if (compression === RLE8 || compression === RLE4) {
    // Pixels no code reaches (a delta, an early end) take palette entry 0, as Pillow leaves them.
    for (let at = 0; at < out.length; at += 3) put(at, colour(0))
    decodeRle(bytes, dataOffset, width, height, bpp === 4, (x, y, index) => put(row(y) + x * 3, colour(index)))
    return { pixels: out, channels }
  }
  const lineBytes = stride(width, bpp)
  if (bpp <= 8) {
    const perByte = 8 / bpp
    const mask = (1 << bpp) - 1
    for (let y = 0; y < height; y++) {
      const line = dataOffset + y * lineBytes
      const target = row(y)
      for (let x = 0; x < width; x++) {
        const byte = bytes[line + Math.floor(x / perByte)] ?? 0
        put(target + x * 3, colour((byte >> (8 - bpp * ((x % perByte) + 1))) & mask))
      }
    }
    return { pixels: out, channels }
  }
  const [r, g, b, a] = masks.map(channel) as [(p: number) => number, (p: number) => number, (p: number) => number, (p: number) => number]
  const step = bpp / 8
  let anyAlpha = false
  for (let y = 0; y < height; y++) {
    const line = dataOffset + y * lineBytes
    const target = row(y)
    for (let x = 0; x < width; x++) {
      const at = line + x * step
      const to = target + x * channels
      if (bpp === 24) {
        out[to] = bytes[at + 2] ?? 0
        out[to + 1] = bytes[at + 1] ?? 0
        out[to + 2] = bytes[at] ?? 0
        continue
      }
      const pixel = bpp === 16 ? (bytes[at] ?? 0) | ((bytes[at + 1] ?? 0) << 8) : at + 4 <= bytes.length ? bytes.readUInt32LE(at) : 0
      out[to] = r(pixel)
      out[to + 1] = g(pixel)
      out[to + 2] = b(pixel)
      if (alpha) {
        out[to + 3] = a(pixel)
        anyAlpha ||= out[to + 3] !== 0
      }
    }
  }
  if (alpha && !anyAlpha) {
    // An alpha channel that is zero everywhere is unused, as browsers read it (not a blank image).
    for (let at = 3; at < out.length; at += 4) out[at] = 255
  }
  return { pixels: out, channels }
}

/** Walk RLE8/RLE4 codes from `start`, calling `set` per pixel (y counted from the bottom row); stops at the end of data. */
function decodeRle(bytes: Buffer, start: number, width: number, height: number, four: boolean,
  set: (x: number, y: number, index: number) => void): void {
  let x = 0
  let y = 0
  let at = start
  const paint = (index: number) => {
    if (x < width && y < height) set(x, y, index)
    x++
  }
  while (at + 1 < bytes.length && y < height) {
    const count = bytes[at] ?? 0
    const value = bytes[at + 1] ?? 0
    at += 2
    if (count > 0) {
      for (let i = 0; i < count; i++) paint(four ? (i % 2 === 0 ? value >> 4 : value & 0x0f) : value)
    } else if (value === 0) {
      x = 0
      y++
    } else if (value === 1) {
      return
    } else if (value === 2) {
      x += bytes[at] ?? 0
      y += bytes[at + 1] ?? 0
      at += 2
    } else {
      // Absolute mode: `value` pixels, their bytes padded to a 16-bit boundary.
      const size = four ? Math.ceil(value / 2) : value
      for (let i = 0; i < value; i++) {
        const byte = bytes[at + (four ? i >> 1 : i)] ?? 0
        paint(four ? (i % 2 === 0 ? byte >> 4 : byte & 0x0f) : byte)
      }
      at += size + (size % 2)
    }
  }
}
