/** A BMP decoder: Windows 3.x–V5 and OS/2 1.x/2.x headers; 1/4/8-bit palettes, RLE4/RLE8, 16/24/32-bit (bitfields). */

/** A BMP this decoder cannot take, with the reason as the message. */
class BmpError extends Error {}

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

/** Pixels emitted between yields to the event loop (so signals and aborts are served during a large decode). */
const YIELD_PIXELS = 1 << 20

/** Where decoded rows go: straight to the output, or box-averaged over `shrink`x`shrink` blocks (memory bounded by the output). */
class Sink {
  readonly width: number
  readonly height: number
  readonly pixels: Buffer
  private readonly sums: Uint32Array | undefined
  private emitted = 0

  constructor(private readonly source: { width: number, height: number }, readonly channels: 3 | 4, private readonly shrink: number,
    private readonly signal: AbortSignal | undefined) {
    this.width = Math.ceil(source.width / shrink)
    this.height = Math.ceil(source.height / shrink)
    this.pixels = Buffer.alloc(this.width * this.height * channels)
    this.sums = shrink === 1 ? undefined : new Uint32Array(this.pixels.length)
  }

  /** One decoded row (y counted from the top); yields to the event loop now and then, and stops on abort. */
  async row(y: number, row: Uint8Array): Promise<void> {
    const { sums, channels, shrink } = this
    if (sums === undefined) {
      this.pixels.set(row, y * row.length)
    } else {
      let at = Math.floor(y / shrink) * this.width * channels
      const four = channels === 4
      for (let x = 0, left = shrink; x < row.length; x += channels) {
        sums[at] = (sums[at] ?? 0) + (row[x] ?? 0)
        sums[at + 1] = (sums[at + 1] ?? 0) + (row[x + 1] ?? 0)
        sums[at + 2] = (sums[at + 2] ?? 0) + (row[x + 2] ?? 0)
        if (four) sums[at + 3] = (sums[at + 3] ?? 0) + (row[x + 3] ?? 0)
        if (--left === 0) {
          left = shrink
          at += channels
        }
      }
    }
    this.emitted += row.length / channels
    await this.pause()
  }

  /** `count` equal rows from `y` (counted from the top), at the cost of the output rows they cover. */
  async rows(y: number, count: number, row: Uint8Array): Promise<void> {
    const { sums, channels, shrink } = this
    if (sums === undefined) {
      for (let i = 0; i < count; i++) this.pixels.set(row, (y + i) * row.length)
      this.emitted += count * (row.length / channels)
    } else {
      // The row's sum per output column, added once per output row, times the source rows it covers there.
      const columns = new Uint32Array(this.width * channels)
      for (let x = 0; x < row.length; x += channels) {
        const at = Math.floor(x / channels / shrink) * channels
        for (let c = 0; c < channels; c++) columns[at + c] = (columns[at + c] ?? 0) + (row[x + c] ?? 0)
      }
      for (let oy = Math.floor(y / shrink); oy * shrink < y + count; oy++) {
        const covered = Math.min(y + count, (oy + 1) * shrink) - Math.max(y, oy * shrink)
        const base = oy * this.width * channels
        for (let i = 0; i < columns.length; i++) sums[base + i] = (sums[base + i] ?? 0) + (columns[i] ?? 0) * covered
      }
      this.emitted += Math.ceil(count / shrink) * this.width
    }
    await this.pause()
  }

  private async pause(): Promise<void> {
    if (this.emitted < YIELD_PIXELS) return
    this.emitted = 0
    await new Promise((resolve) => setImmediate(resolve))
    if (this.signal?.aborted === true) throw new BmpError('read aborted')
  }

  finish(): Buffer {
    const sums = this.sums
    if (sums === undefined) return this.pixels
    const { shrink, channels } = this
    for (let oy = 0; oy < this.height; oy++) {
      const rows = Math.min(shrink, this.source.height - oy * shrink)
      for (let ox = 0; ox < this.width; ox++) {
        const count = rows * Math.min(shrink, this.source.width - ox * shrink)
        const at = (oy * this.width + ox) * channels
        for (let c = 0; c < channels; c++) this.pixels[at + c] = Math.round((sums[at + c] ?? 0) / count)
      }
    }
    return this.pixels
  }
}

export type DecodedBmp = { pixels: Buffer, width: number, height: number, channels: 3 | 4 }

/**
 * The pixels as top-down RGB rows (RGBA when an alpha mask is in use and not all zero), box-averaged by
 * `shrink` when the caller only needs a smaller image.
 */
export async function decodeBmp(data: Uint8Array, info: BmpInfo, shrink = 1, signal?: AbortSignal): Promise<DecodedBmp> {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const { width, height, bpp, compression, topDown, dataOffset, palette, masks } = info
  const alpha = bpp >= 16 && masks[3] !== 0 && compression !== RGB
  const channels = alpha ? 4 : 3
  const sink = new Sink(info, channels, Math.max(1, Math.floor(shrink)), signal)
  const done = (pixels: Buffer): DecodedBmp => ({ pixels, width: sink.width, height: sink.height, channels })
  const top = (y: number) => topDown ? y : height - 1 - y
  const out = new Uint8Array(width * channels)
  // Palette entries as RGB bytes; indices past the palette are black.
  const lut = new Uint8Array(256 * 3)
  palette.forEach((rgb, i) => lut.set([rgb >>> 16, (rgb >>> 8) & 0xff, rgb & 0xff], i * 3))
  const paint = (indices: ArrayLike<number>) => {
    for (let x = 0; x < width; x++) {
      const from = (indices[x] ?? 0) * 3
      out[x * 3] = lut[from] ?? 0
      out[x * 3 + 1] = lut[from + 1] ?? 0
      out[x * 3 + 2] = lut[from + 2] ?? 0
    }
  }

  if (compression === RLE8 || compression === RLE4) {
    const flush = async (y: number, line: Uint8Array) => {
      paint(line)
      await sink.row(top(y), out)
    }
    const blank = async (from: number, rows: number) => {
      paint(new Uint8Array(width))
      await sink.rows(topDown ? from : height - from - rows, rows, out)
    }
    await decodeRle(bytes, dataOffset, width, height, bpp === 4, flush, blank)
    return done(sink.finish())
  }
  const lineBytes = stride(width, bpp)
  if (bpp <= 8) {
    const perByte = 8 / bpp
    const mask = (1 << bpp) - 1
    const indices = new Uint8Array(width)
    for (let y = 0; y < height; y++) {
      const line = dataOffset + y * lineBytes
      for (let x = 0; x < width; x++) {
        indices[x] = ((bytes[line + Math.floor(x / perByte)] ?? 0) >> (8 - bpp * ((x % perByte) + 1))) & mask
      }
      paint(indices)
      await sink.row(top(y), out)
    }
    return done(sink.finish())
  }
  const [r, g, b, a] = masks.map(channel) as [(p: number) => number, (p: number) => number, (p: number) => number, (p: number) => number]
  const step = bpp / 8
  let anyAlpha = false
  for (let y = 0; y < height; y++) {
    const line = dataOffset + y * lineBytes
    for (let x = 0; x < width; x++) {
      const at = line + x * step
      const to = x * channels
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
    await sink.row(top(y), out)
  }
  const pixels = sink.finish()
  if (alpha && !anyAlpha) {
    // An alpha channel that is zero everywhere is unused, as browsers read it (not a blank image).
    for (let at = 3; at < pixels.length; at += 4) pixels[at] = 255
  }
  return done(pixels)
}

/**
 * Walk RLE8/RLE4 codes from `start`, handing each row's palette indices to `flush` (y counted from the bottom) once
 * the codes leave it, and runs of rows no code reaches to `blank`; pixels no code reaches keep index 0, as Pillow leaves them.
 */
async function decodeRle(bytes: Buffer, start: number, width: number, height: number, four: boolean,
  flush: (y: number, line: Uint8Array) => Promise<void>, blank: (from: number, rows: number) => Promise<void>): Promise<void> {
  const line = new Uint8Array(width)
  let x = 0
  let y = 0
  let at = start
  /** Codes only move forward: a row is complete once they leave it. Returns the row they are on. */
  const leave = async (from: number, rows: number): Promise<number> => {
    const to = Math.min(height, from + rows)
    if (from >= to) return from
    await flush(from, line)
    line.fill(0)
    // A header may claim millions of rows the data never reaches: those cost the output's size, not the claim's.
    if (to - from > 1) await blank(from + 1, to - from - 1)
    return to
  }
  const put = (index: number) => {
    if (x < width) line[x] = index
    x++
  }
  while (at + 1 < bytes.length && y < height) {
    const count = bytes[at] ?? 0
    const value = bytes[at + 1] ?? 0
    at += 2
    if (count > 0) {
      const from = x
      const end = Math.min(width, from + count)
      if (four) {
        for (let p = from; p < end; p++) line[p] = (p - from) % 2 === 0 ? value >> 4 : value & 0x0f
      } else if (from < end) {
        line.fill(value, from, end)
      }
      x = from + count
    } else if (value === 0) {
      x = 0
      y = await leave(y, 1)
    } else if (value === 1) {
      break
    } else if (value === 2) {
      x += bytes[at] ?? 0
      y = await leave(y, bytes[at + 1] ?? 0)
      at += 2
    } else {
      // Absolute mode: `value` pixels, their bytes padded to a 16-bit boundary.
      const size = four ? Math.ceil(value / 2) : value
      for (let i = 0; i < value; i++) {
        const byte = bytes[at + (four ? i >> 1 : i)] ?? 0
        put(four ? (i % 2 === 0 ? byte >> 4 : byte & 0x0f) : byte)
      }
      at += size + (size % 2)
    }
  }
  await leave(y, height - y)
}
