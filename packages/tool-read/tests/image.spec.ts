import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { AttachmentId, type ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { sizeOf as formatBytes } from '../src/formats/image/render.ts'
import type { ImageValue } from '../src/formats/image/value.ts'
import { readHost } from './harness.ts'

let host: Host | undefined
let home: string | undefined
afterEach(async () => {
  await host?.dispose()
  host = undefined
  if (home !== undefined) await removeTmpDir(home)
  home = undefined
})

/** A host with tool-read, optionally an attachment store, and a route that may take images. */
async function imageHost(options: { store: boolean, imageInput: boolean }): Promise<Host> {
  const booted = await readHost({}, { imageInput: options.imageInput })
  if (options.store) {
    home = await makeTmpDir('dsh-home-')
    await booted.ctx.plugin(LocalAttachmentStore, { dshHome: home })
  }
  host = booted
  return booted
}

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer()
}

/** A 24-bit bottom-up BMP: left half blue, right half green. */
function bmp(width: number, height: number): Buffer {
  const stride = Math.floor((24 * width + 31) / 32) * 4
  const data = Buffer.alloc(54 + stride * height)
  data.write('BM', 0, 'latin1')
  data.writeUInt32LE(data.length, 2)
  data.writeUInt32LE(54, 10)
  data.writeUInt32LE(40, 14)
  data.writeInt32LE(width, 18)
  data.writeInt32LE(height, 22)
  data.writeUInt16LE(1, 26)
  data.writeUInt16LE(24, 28)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = 54 + y * stride + x * 3
      if (x < width / 2) data[at] = 255 // blue (BGR order)
      else data[at + 1] = 255 // green
    }
  }
  return data
}

const fixtures: Record<string, () => Promise<Buffer>> = {
  'pic.png': () => png(40, 30),
  'pic.jpg': () => sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } }).jpeg().toBuffer(),
  'pic.jpeg': () => sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } }).jpeg().toBuffer(),
  'pic.gif': () => sharp({ create: { width: 40, height: 30, channels: 3, background: '#33cc66' } }).gif().toBuffer(),
  'pic.webp': () => sharp({ create: { width: 40, height: 30, channels: 3, background: '#cc66cc' } }).webp().toBuffer(),
  'pic.bmp': async () => bmp(40, 30),
}

const names: Record<string, string> = { png: 'PNG', jpg: 'JPEG', jpeg: 'JPEG', gif: 'GIF', webp: 'WebP', bmp: 'BMP' }

async function storedImage(on: Host, ref: ImageAttachmentRef) {
  const stored = await on.ctx.attachments.readImage(ref)
  return sharp(Buffer.from(stored.data)).metadata()
}

describe('images with an image-capable route and an attachment store', () => {
  for (const [file, make] of Object.entries(fixtures)) {
    it(`${file}: an image block the store holds, with its dimensions`, async () => {
      const on = await imageHost({ store: true, imageInput: true })
      const bytes = await make()
      await writeFile(join(on.cwd, file), bytes)
      const result = await execTool(on.ctx, 'read_file', { file_path: file }, { agent: on.agent() })
      expect(result.isError).toBe(false)
      const ext = file.split('.')[1]!
      const mediaType = ext === 'bmp' ? 'image/png' : `image/${ext === 'jpg' ? 'jpeg' : ext}`
      const [text, image] = result.content
      expect(image?.type).toBe('image')
      const ref = (image as { attachment: ImageAttachmentRef }).attachment
      expect(ref).toMatchObject({ mediaType, width: 40, height: 30 })
      expect((text as { text: string }).text).toBe(
        `${names[ext]} image, 40x30 px, ${formatBytes(bytes.length)}; attached as ${mediaType}, ${formatBytes(ref.bytes)}.`,
      )
      // The world: the store really holds a decodable image of that size and format.
      const meta = await storedImage(on, ref)
      expect([meta.width, meta.height, `image/${meta.format}`]).toEqual([40, 30, mediaType])
      if (ext === 'bmp') {
        // Transcoded faithfully: left pixel blue, right pixel green.
        const stored = Buffer.from((await on.ctx.attachments.readImage(ref)).data)
        const { data: raw, info } = await sharp(stored).raw().toBuffer({ resolveWithObject: true })
        const pixel = (x: number) => [...raw.subarray(x * info.channels, x * info.channels + 3)]
        expect(pixel(0)).toEqual([0, 0, 255])
        expect(pixel(39)).toEqual([0, 255, 0])
      } else {
        // Within limits and in an admitted format: stored unchanged.
        expect(ref.bytes).toBe(bytes.length)
      }
    })
  }

  it('an oversized image is downscaled to the store limits, reporting both sizes', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const bytes = await png(3000, 1000)
    await writeFile(join(on.cwd, 'wide.png'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'wide.png' }, { agent: on.agent() })
    expect(result.isError).toBe(false)
    const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
    expect([ref.width, ref.height]).toEqual([2000, 666])
    expect(textOf(result)).toBe(
      `PNG image, 3000x1000 px, ${formatBytes(bytes.length)}; attached downscaled to 2000x666 px (image/png, ${formatBytes(ref.bytes)}): multiply coordinates by 1.50 to locate features in the original.[image]`,
    )
    const meta = await storedImage(on, ref)
    expect([meta.width, meta.height]).toEqual([2000, 666])
  })

  it('the canonical value reports the file and the attached image', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const bytes = await png(40, 30)
    await writeFile(join(on.cwd, 'v.png'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'v.png' }, { agent: on.agent() })
    const value = result.isError ? undefined : result.value as Record<string, unknown>
    expect(value).toMatchObject({ kind: 'image', path: join(on.cwd, 'v.png'), format: 'png', width: 40, height: 30, bytes: bytes.length })
    const attached = value?.attached as { attachment_id: string, media_type: string, width: number, height: number, bytes: number }
    expect(attached).toEqual({ attachment_id: expect.stringMatching(/^sha256:[a-f0-9]{64}$/), media_type: 'image/png', width: 40, height: 30, bytes: bytes.length, name: 'v.png' })
    const { width, height } = attached
    const stored = await on.ctx.attachments.readImage({ attachmentId: AttachmentId(attached.attachment_id), mediaType: 'image/png', bytes: attached.bytes, width, height })
    expect(Buffer.from(stored.data).equals(bytes)).toBe(true)
  })
})

describe('a store that admits only JPEG', () => {
  /** The attachment store with its admitted types narrowed (the one injected fault). */
  async function jpegOnly(): Promise<Host> {
    const on = await imageHost({ store: true, imageInput: true })
    const limits = on.ctx.attachments.imageLimits
    Object.defineProperty(on.ctx.attachments, 'imageLimits', { value: { ...limits, mediaTypes: ['image/jpeg'] } })
    return on
  }

  it('a BMP and an oversized PNG are converted to JPEG, which it admits', async () => {
    const on = await jpegOnly()
    await writeFile(join(on.cwd, 'pic.bmp'), bmp(40, 30))
    await writeFile(join(on.cwd, 'big.png'), await png(3000, 100))
    for (const [file, size] of [['pic.bmp', [40, 30]], ['big.png', [2000, 66]]] as const) {
      const result = await execTool(on.ctx, 'read_file', { file_path: file }, { agent: on.agent() })
      expect(result.isError, textOf(result)).toBe(false)
      const attached = (result.value as ImageValue).attached!
      expect(attached).toMatchObject({ media_type: 'image/jpeg', width: size[0], height: size[1] })
      const { bytes, width, height, media_type: mediaType } = attached
      const stored = await storedImage(on, { attachmentId: AttachmentId(attached.attachment_id), mediaType, bytes, width, height })
      expect(stored.format).toBe('jpeg')
    }
  })
})

describe('images without an image block', () => {
  it('a route without image input gets a text description, not an error', async () => {
    const on = await imageHost({ store: true, imageInput: false })
    const bytes = await png(40, 30)
    await writeFile(join(on.cwd, 'p.png'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'p.png' }, { agent: on.agent() })
    expect(result.isError).toBe(false)
    expect(result.content).toHaveLength(1)
    expect(textOf(result)).toBe(`PNG image, 40x30 px, ${bytes.length} bytes. Not attached: the current model does not take image input.`)
  })

  it('no attachment store: a text description', async () => {
    const on = await imageHost({ store: false, imageInput: true })
    await writeFile(join(on.cwd, 'p.bmp'), bmp(8, 4))
    const result = await execTool(on.ctx, 'read_file', { file_path: 'p.bmp' }, { agent: on.agent() })
    expect(textOf(result)).toBe('BMP image, 8x4 px, 150 bytes. Not attached: no attachment store is composed.')
  })
})

describe('image errors', () => {
  it('a .png that is not a PNG is a clear error, never an image block', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    await writeFile(join(on.cwd, 'fake.png'), 'just text\n')
    const result = await execTool(on.ctx, 'read_file', { file_path: 'fake.png' }, { agent: on.agent() })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toBe(`Error: cannot read "${join(on.cwd, 'fake.png')}": the .png extension says PNG, but the bytes are not an image in any format read_file knows`)
  })

  it('a JPEG named .png says what it really is', async () => {
    const on = await imageHost({ store: false, imageInput: false })
    await writeFile(join(on.cwd, 'photo.png'), await fixtures['pic.jpg']!())
    const result = await execTool(on.ctx, 'read_file', { file_path: 'photo.png' })
    expect(textOf(result)).toBe(`Error: cannot read "${join(on.cwd, 'photo.png')}": the .png extension says PNG, but the bytes are a JPEG image; rename it to match`)
  })

  it('a corrupt (truncated) image is a clear error', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const whole = await sharp({ create: { width: 300, height: 300, channels: 3, background: '#123456' } }).png({ compressionLevel: 0 }).toBuffer()
    await writeFile(join(on.cwd, 'broken.png'), whole.subarray(0, Math.floor(whole.length / 2)))
    const result = await execTool(on.ctx, 'read_file', { file_path: 'broken.png' }, { agent: on.agent() })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(new RegExp(`^Error: cannot read "${join(on.cwd, 'broken.png')}": corrupt PNG image \\(.+[^:]\\) — regenerate the image, or read another file$`))
  })

  it('a truncated BMP is a clear error', async () => {
    const on = await imageHost({ store: false, imageInput: false })
    await writeFile(join(on.cwd, 'cut.bmp'), bmp(20, 20).subarray(0, 100))
    expect(textOf(await execTool(on.ctx, 'read_file', { file_path: 'cut.bmp' }))).toBe(`Error: cannot read "${join(on.cwd, 'cut.bmp')}": corrupt BMP image (truncated BMP pixel data) — regenerate the image, or read another file`)
  })

  it('an image that cannot fit the store\'s byte limit even downscaled is refused', async () => {
    host = await readHost({}, { imageInput: true })
    home = await makeTmpDir('dsh-home-')
    await host.ctx.plugin(LocalAttachmentStore, { dshHome: home, maxImageBytes: 10 })
    await writeFile(join(host.cwd, 'p.png'), await png(40, 30))
    const result = await execTool(host.ctx, 'read_file', { file_path: 'p.png' }, { agent: host.agent() })
    expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_TOO_LARGE')
    expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'p.png')}": the image does not fit the attachment store's 10-byte limit even downscaled`)
  })

  it('a store that cannot persist the image: its refusal is passed on with its code', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const bytes = await png(40, 30)
    await writeFile(join(on.cwd, 'p.png'), bytes)
    // A damaged store: a directory squats where the image's content-addressed object belongs.
    const sha = createHash('sha256').update(bytes).digest('hex')
    await mkdir(join(home!, 'attachments', 'v1', 'objects', sha.slice(0, 2), sha), { recursive: true })
    const result = await execTool(on.ctx, 'read_file', { file_path: 'p.png' }, { agent: on.agent() })
    expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_IO_ERROR')
    expect(textOf(result)).toBe(
      `Error: cannot read "${join(on.cwd, 'p.png')}": the attachment store refused the image (ATTACHMENT_WRITE_FAILED: Unable to persist image attachment.)`,
    )
  })

  it('an image over maxFileBytes is refused before reading', async () => {
    host = await readHost({ maxFileBytes: 100 })
    await writeFile(join(host.cwd, 'big.png'), await png(40, 30))
    const size = (await readFile(join(host.cwd, 'big.png'))).length
    expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'big.png' }))).toBe(
      `Error: cannot read "${join(host.cwd, 'big.png')}": ${size} bytes exceeds maxFileBytes (100) for a file read whole — read a smaller file, or raise maxFileBytes in tool-read's config`,
    )
  })
})

describe('images as a viewer shows them', () => {
  /** A JPEG stored 40x20 (left half red, right half blue) whose EXIF orientation 6 turns it upright to 20x40. */
  async function turnedJpeg(): Promise<Buffer> {
    const left = { width: 20, height: 20, channels: 3, background: '#ff0000' } as const
    const right = await sharp({ create: { ...left, background: '#0000ff' } }).png().toBuffer()
    return sharp({ create: { ...left, width: 40 } }).composite([{ input: right, left: 20, top: 0 }])
      .withMetadata({ orientation: 6 }).jpeg({ quality: 95 }).toBuffer()
  }

  async function mean(data: Uint8Array, region: { left: number, top: number, width: number, height: number }): Promise<number[]> {
    // Pixels, not stats(): sharp computes stats on the input, whatever extract says.
    const { data: pixels, info } = await sharp(data).extract(region).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    const sums = [0, 0, 0]
    for (let i = 0; i < pixels.length; i++) sums[i % 3]! += pixels[i]!
    return sums.map((sum) => Math.round(sum / (info.width * info.height)))
  }

  it('EXIF orientation is applied: a photo stored 40x20 with orientation 6 is reported and attached as 20x40, upright', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const bytes = await turnedJpeg()
    expect(await sharp(bytes).metadata()).toMatchObject({ width: 40, height: 20, orientation: 6 })
    await writeFile(join(on.cwd, 'photo.jpg'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'photo.jpg' }, { agent: on.agent() })
    expect(result.value).toMatchObject({ width: 20, height: 40 })
    expect(textOf(result)).toMatch(/^JPEG image, 20x40 px, .*; attached as image\/jpeg, /u)
    const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
    const stored = (await on.ctx.attachments.readImage(ref)).data
    const meta = await sharp(stored).metadata()
    expect([meta.width, meta.height, meta.orientation ?? 1]).toEqual([20, 40, 1])
    // Turned a quarter clockwise: the stored left (red) half is the top.
    const top = await mean(stored, { left: 2, top: 2, width: 16, height: 16 })
    const bottom = await mean(stored, { left: 2, top: 22, width: 16, height: 16 })
    expect(top.map((v, i) => Math.abs(v - [255, 0, 0][i]!) < 12)).toEqual([true, true, true])
    expect(bottom.map((v, i) => Math.abs(v - [0, 0, 255][i]!) < 12)).toEqual([true, true, true])
  })

  it('EXIF orientation without an image block: the dimensions as displayed', async () => {
    const on = await imageHost({ store: false, imageInput: false })
    const bytes = await turnedJpeg()
    await writeFile(join(on.cwd, 'photo.jpg'), bytes)
    expect(textOf(await execTool(on.ctx, 'read_file', { file_path: 'photo.jpg' }))).toBe(`JPEG image, 20x40 px, ${formatBytes(bytes.length)}. Not attached: no attachment store is composed.`)
  })

  it('a CMYK JPEG is attached converted to sRGB, its colour kept', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    // A colour inside the CMYK gamut, so the round trip can keep it.
    const bytes = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#cc9966' } }).toColourspace('cmyk').jpeg({ quality: 95 }).toBuffer()
    expect((await sharp(bytes).metadata()).space).toBe('cmyk')
    await writeFile(join(on.cwd, 'print.jpg'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'print.jpg' }, { agent: on.agent() })
    const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
    expect(ref).toMatchObject({ mediaType: 'image/jpeg', width: 40, height: 30 })
    const stored = (await on.ctx.attachments.readImage(ref)).data
    expect(await sharp(stored).metadata()).toMatchObject({ space: 'srgb', channels: 3 })
    const colour = await mean(stored, { left: 0, top: 0, width: 40, height: 30 })
    expect(colour.map((v, i) => Math.abs(v - [0xcc, 0x99, 0x66][i]!) < 12), colour.join(' ')).toEqual([true, true, true])
  })

  /** A 3-frame GIF: red, green, blue. */
  async function animatedGif(): Promise<Buffer> {
    const frames = await Promise.all(['#ff0000', '#00ff00', '#0000ff'].map((background) =>
      sharp({ create: { width: 8, height: 6, channels: 3, background } }).raw().toBuffer()))
    return sharp(Buffer.concat(frames), { raw: { width: 8, height: 18, channels: 3, pageHeight: 6 } }).gif().toBuffer()
  }

  it('an animated GIF says it is animated and attaches one frame, the one it names', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    const bytes = await animatedGif()
    expect((await sharp(bytes).metadata()).pages).toBe(3)
    await writeFile(join(on.cwd, 'spin.gif'), bytes)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'spin.gif' }, { agent: on.agent() })
    expect(result.value).toMatchObject({ format: 'gif', width: 8, height: 6, animated: { frames: 3, shown: 1 } })
    const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
    expect(textOf(result)).toBe(`GIF image, 8x6 px, ${formatBytes(bytes.length)}, animated (3 frames); frame 1 attached as image/gif, ${formatBytes(ref.bytes)}.[image]`)
    const stored = (await on.ctx.attachments.readImage(ref)).data
    expect((await sharp(stored).metadata()).pages ?? 1).toBe(1)
    expect(await mean(stored, { left: 0, top: 0, width: 8, height: 6 })).toEqual([255, 0, 0])
  })

  it('an animated GIF without an image block still says it is animated', async () => {
    const on = await imageHost({ store: true, imageInput: false })
    const bytes = await animatedGif()
    await writeFile(join(on.cwd, 'spin.gif'), bytes)
    expect(textOf(await execTool(on.ctx, 'read_file', { file_path: 'spin.gif' }, { agent: on.agent() }))).toBe(
      `GIF image, 8x6 px, ${formatBytes(bytes.length)}, animated (3 frames). Not attached: the current model does not take image input.`,
    )
  })
})
