/**
 * BMPs decoded as a reference decoder does: each fixture in fixtures/bmp (written byte by byte by make.py)
 * is read through read_file into the real attachment store, and the stored image must equal Pillow's
 * decode of the same file (the .png beside it) pixel for pixel, on both compositions. Codes Pillow 9.4
 * misreads (RLE deltas, odd RLE4 absolute runs) are checked against pixels worked out by hand.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { copyFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import type { ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

const FIXTURES = join(import.meta.dirname, 'fixtures', 'bmp')
const BMPS = readdirSync(FIXTURES).filter((name) => name.endsWith('.bmp')).sort()

async function decodeRgba(data: Uint8Array | string): Promise<{ pixels: Buffer, width: number, height: number }> {
  const { data: pixels, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { pixels, width: info.width, height: info.height }
}

/** Mean absolute difference per channel value, and the largest one. */
function difference(a: Buffer, b: Buffer): { mean: number, max: number } {
  let sum = 0
  let max = 0
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs((a[i] ?? 0) - (b[i] ?? 0))
    sum += d
    max = Math.max(max, d)
  }
  return { mean: sum / a.length, max }
}

/** A 40-byte-header BMP around `pixels` (RLE codes or rows), with a palette of `colours` (0xRRGGBB). */
function bmpFile(width: number, height: number, bpp: number, compression: number, colours: number[], pixels: Buffer): Buffer {
  const header = Buffer.alloc(54)
  const table = Buffer.alloc(colours.length * 4)
  colours.forEach((rgb, i) => table.writeUInt32LE(rgb, i * 4))
  header.write('BM', 0, 'latin1')
  header.writeUInt32LE(54 + table.length + pixels.length, 2)
  header.writeUInt32LE(54 + table.length, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(width, 18)
  header.writeInt32LE(height, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(bpp, 28)
  header.writeUInt32LE(compression, 30)
  header.writeUInt32LE(pixels.length, 34)
  header.writeUInt32LE(colours.length, 46)
  return Buffer.concat([header, table, pixels])
}

/** A valid 1-bit greyscale PNG of `width`x`height` (all black), written without decoding it. */
function blackPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
    const out = Buffer.alloc(12 + data.length)
    out.writeUInt32LE(0, 0)
    out.writeUInt32BE(data.length, 0)
    body.copy(out, 4)
    out.writeUInt32BE(crc32(body), 8 + data.length)
    return out
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 1
  const rows = Buffer.alloc((1 + Math.ceil(width / 8)) * height)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows, { level: 9 })), chunk('IEND', Buffer.alloc(0)),
  ])
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff
  for (const byte of data) {
    crc ^= byte
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1))
  }
  return (crc ^ 0xffffffff) >>> 0
}

for (const [composition, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' as const }], ['dsh-fs-local', {}]] as const) {
  describe(`BMPs on ${composition}`, () => {
    let host: Host
    let home: string
    beforeAll(async () => {
      host = await readHost({}, { ...options, imageInput: true })
      home = await makeTmpDir('dsh-home-')
      await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(home)
    })

    type Attached = { text: string, ref: ImageAttachmentRef, pixels: Buffer, width: number, height: number }
    async function attached(file: string): Promise<Attached> {
      const result = await execTool(host.ctx, 'read_file', { file_path: file }, { agent: host.agent() })
      expect(result.isError, textOf(result)).toBe(false)
      const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
      const stored = await host.ctx.attachments.readImage(ref)
      return { text: textOf(result), ref, ...await decodeRgba(Buffer.from(stored.data)) }
    }

    for (const name of BMPS) {
      it(`${name}: the attached image is Pillow's decode, pixel for pixel`, async () => {
        await copyFile(join(FIXTURES, name), join(host.cwd, name))
        const reference = await decodeRgba(join(FIXTURES, name.replace(/\.bmp$/u, '.png')))
        const got = await attached(name)
        expect([got.width, got.height]).toEqual([reference.width, reference.height])
        expect(got.text).toMatch(new RegExp(`^BMP image, ${reference.width}x${reference.height} px, .*; attached as image/png, `))
        expect(difference(got.pixels, reference.pixels)).toEqual({ mean: 0, max: 0 })
      })
    }

    it('150 damaged BMPs (fixtures with bytes overwritten, seeded): each an image or a clear error, never a throw', async () => {
      let seed = 22
      const random = (below: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31
        return seed % below
      }
      const outcomes = { images: 0, errors: 0 }
      for (let i = 0; i < 150; i++) {
        const bytes = Buffer.from(readFileSync(join(FIXTURES, BMPS[i % BMPS.length] ?? '')))
        // Headers and palettes are where a decoder trusts numbers: hit the first 80 bytes most.
        for (let k = 0; k < 1 + random(4); k++) {
          bytes[random(3) === 0 ? random(bytes.length) : random(Math.min(80, bytes.length))] = random(256)
        }
        await writeFile(join(host.cwd, 'damaged.bmp'), bytes)
        const result = await execTool(host.ctx, 'read_file', { file_path: 'damaged.bmp' }, { agent: host.agent() })
        if (result.isError) {
          expect(textOf(result)).toMatch(/^Error: cannot read "[^"]+": (corrupt BMP image \(.+\) — regenerate|the BMP image is \d+x\d+ px|the \.bmp extension says BMP, but)/u)
          outcomes.errors++
        } else {
          expect(textOf(result)).toMatch(/^BMP image, \d+x\d+ px, /u)
          outcomes.images++
        }
      }
      expect(outcomes.images + outcomes.errors).toBe(150)
      expect(outcomes.images).toBeGreaterThan(20)
      expect(outcomes.errors).toBeGreaterThan(10)
    }, 120_000)

    it('RLE8 deltas and RLE4 odd absolute runs land where the codes say; skipped pixels take palette entry 0', async () => {
      const colours = [0x000000, 0xff0000, 0x00ff00, 0x0000ff, 0xffff00]
      const rgba = (indices: number[]) => indices.flatMap((i) => {
        const c = colours[i] ?? -1
        return [c >> 16, (c >> 8) & 0xff, c & 0xff, 255]
      })
      // 4x3 RLE8, bottom row first: two of index 1; a delta (+1, +1) to x=3 of row 1, one of index 2;
      // EOL; an absolute run 3 4 3 (odd: one pad byte); EOB.
      const rle8 = Buffer.from([2, 1, 0, 2, 1, 1, 1, 2, 0, 0, 0, 3, 3, 4, 3, 0, 0, 1])
      await writeFile(join(host.cwd, 'delta8.bmp'), bmpFile(4, 3, 8, 1, colours, rle8))
      expect([...(await attached('delta8.bmp')).pixels]).toEqual(rgba([3, 4, 3, 0, 0, 0, 0, 2, 1, 1, 0, 0]))
      // 3x5 RLE8: one bottom row, then a delta 4 rows up past the top: the rest is palette entry 0.
      const early = Buffer.from([3, 4, 0, 2, 0, 4, 0, 1])
      await writeFile(join(host.cwd, 'early.bmp'), bmpFile(3, 5, 8, 1, colours.map((c, i) => i === 0 ? 0x00ff00 : c), early))
      const green = [0, 255, 0, 255]
      expect([...(await attached('early.bmp')).pixels]).toEqual([...Array.from({ length: 12 }, () => green).flat(), ...rgba([4, 4, 4])])
      // 5x1 RLE4: an absolute run of 3 pixels in 2 bytes (1 2 | 3 _), then an encoded run of 2 of index 4.
      const rle4 = Buffer.from([0, 3, 0x12, 0x30, 2, 0x44, 0, 1])
      await writeFile(join(host.cwd, 'odd4.bmp'), bmpFile(5, 1, 4, 2, colours, rle4))
      expect([...(await attached('odd4.bmp')).pixels]).toEqual(rgba([1, 2, 3, 4, 4]))
    })

    it('an OS/2 1.x BMP reports its own dimensions (16-bit fields in a 12-byte header)', async () => {
      await copyFile(join(FIXTURES, 'core-pal8.bmp'), join(host.cwd, 'os2.bmp'))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'os2.bmp' })
      expect(result.value).toMatchObject({ kind: 'image', format: 'bmp', width: 13, height: 7 })
    })

    it('a BMP claiming more pixels than the decode limit says which limit, before decoding', async () => {
      // A 20 kB RLE file may claim 20000x20000: refused on its header.
      await writeFile(join(host.cwd, 'huge.bmp'), bmpFile(20000, 20000, 8, 1, [0], Buffer.from([0, 1])))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'huge.bmp' }, { agent: host.agent() })
      expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_TOO_LARGE')
      expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'huge.bmp')}": the BMP image is 20000x20000 px (400000000 pixels), more than the 268402689-pixel limit read_file decodes — scale it down below that`)
      // Within the pixel limit, but one row would take 400 MB to decode.
      await writeFile(join(host.cwd, 'wide.bmp'), bmpFile(100_000_000, 2, 8, 1, [0], Buffer.from([0, 1])))
      const wide = await execTool(host.ctx, 'read_file', { file_path: 'wide.bmp' }, { agent: host.agent() })
      expect(textOf(wide)).toBe(`Error: cannot read "${join(host.cwd, 'wide.bmp')}": the BMP image is 100000000 px wide, more than the 65536 px read_file decodes — scale it down below that`)
    })

    it('a valid PNG over the pixel limit says which limit, with the numbers, not "corrupt"', async () => {
      await writeFile(join(host.cwd, 'huge.png'), blackPng(16400, 16400))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'huge.png' }, { agent: host.agent() })
      expect(result.isError ? result.error.info?.code : 'no error', textOf(result)).toBe('FS_TOO_LARGE')
      expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'huge.png')}": the PNG image is 16400x16400 px (268960000 pixels), more than the 268402689-pixel limit read_file decodes — scale it down below that`)
    })

    it('a BMP in a compression read_file does not decode is a clear error naming it', async () => {
      const png = Buffer.from(await sharp({ create: { width: 2, height: 2, channels: 3, background: '#fff' } }).png().toBuffer())
      await writeFile(join(host.cwd, 'png-in.bmp'), bmpFile(2, 2, 0, 5, [], png))
      expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'png-in.bmp' }))).toBe(
        `Error: cannot read "${join(host.cwd, 'png-in.bmp')}": corrupt BMP image (PNG with 0 bits per pixel is not supported) — regenerate the image, or read another file`,
      )
    })
  })
}

/** A Python with Pillow, where one is installed (Debian's python3-pil is at /usr/bin/python3). */
const PILLOW = ['/usr/bin/python3', 'python3'].find((python) => spawnSync(python, ['-c', 'import PIL'], { stdio: 'ignore' }).status === 0)

describe('the fixtures', () => {
  it.skipIf(PILLOW === undefined)('are what make.py writes, and their references are what Pillow decodes now', async () => {
    const dir = await makeTmpDir('bmp-fixtures-')
    try {
      await copyFile(join(FIXTURES, 'make.py'), join(dir, 'make.py'))
      expect(spawnSync(PILLOW ?? '', [join(dir, 'make.py')], { encoding: 'utf8' }).status).toBe(0)
      for (const name of BMPS) {
        expect(readFileSync(join(dir, name)).equals(readFileSync(join(FIXTURES, name))), name).toBe(true)
        const png = name.replace(/\.bmp$/u, '.png')
        const [made, committed] = [await decodeRgba(join(dir, png)), await decodeRgba(join(FIXTURES, png))]
        expect(made.pixels.equals(committed.pixels), png).toBe(true)
      }
    } finally {
      await removeTmpDir(dir)
    }
  })
})

describe('a large BMP', () => {
  it('is decoded no larger than the attachment needs, with the event loop served throughout', async () => {
    const host = await readHost({}, { sandbox: 'workspace-write', imageInput: true })
    const home = await makeTmpDir('dsh-home-')
    try {
      await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
      // 10000x8000 (80 M pixels) in 1.4 MB of RLE8: the top half red, the bottom half blue.
      const [width, height] = [10_000, 8000]
      const row = (index: number) => {
        const codes: number[] = []
        for (let left = width; left > 0; left -= 250) codes.push(Math.min(250, left), index)
        return [...codes, 0, 0]
      }
      const rows = Array.from({ length: height }, (_, y) => row(y < height / 2 ? 2 : 1)).flat()
      await writeFile(join(host.cwd, 'big.bmp'), bmpFile(width, height, 8, 1, [0, 0xff0000, 0x0000ff], Buffer.from([...rows, 0, 1])))
      let ticks = 0
      const ticker = setInterval(() => { ticks++ }, 20)
      const before = process.memoryUsage().rss
      let peak = before
      const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 10)
      let result
      try {
        result = await execTool(host.ctx, 'read_file', { file_path: 'big.bmp' }, { agent: host.agent() })
      } finally {
        clearInterval(ticker)
        clearInterval(sampler)
      }
      expect(result.isError, textOf(result)).toBe(false)
      const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
      expect(ref.width / ref.height).toBeCloseTo(width / height, 2)
      const got = await decodeRgba(Buffer.from((await host.ctx.attachments.readImage(ref)).data))
      const at = (x: number, y: number) => [...got.pixels.subarray((y * got.width + x) * 4, (y * got.width + x) * 4 + 3)]
      expect([at(10, 10), at(got.width - 10, got.height - 10)]).toEqual([[255, 0, 0], [0, 0, 255]])
      // The same claim with one coded row, then the end: the other 7999 rows cost the output's rows, not 80 M pixels.
      const sparse = Buffer.concat([bmpFile(width, height, 8, 1, [0x00ff00, 0xff0000], Buffer.from([...row(1), 0, 1]))])
      await writeFile(join(host.cwd, 'sparse.bmp'), sparse)
      const thin = await execTool(host.ctx, 'read_file', { file_path: 'sparse.bmp' }, { agent: host.agent() })
      const thinRef = (thin.content[1] as { attachment: ImageAttachmentRef }).attachment
      const blank = await decodeRgba(Buffer.from((await host.ctx.attachments.readImage(thinRef)).data))
      expect([...blank.pixels.subarray(0, 3)]).toEqual([0, 255, 0])
      // Decoded whole, the RGB pixels alone would take 240 MB (and sharp's copy as much again).
      expect((peak - before) / 2 ** 20).toBeLessThan(200)
      // The host's timers (and its signal handlers) ran during the decode.
      expect(ticks).toBeGreaterThan(1)
    } finally {
      await host.dispose()
      await removeTmpDir(home)
    }
  }, 60_000)
})
