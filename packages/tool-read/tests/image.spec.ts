import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { AttachmentId, type ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { formatBytes } from '../src/render.ts'
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
    const attached = value?.attached as { attachmentId: string, mediaType: string, width: number, height: number, bytes: number }
    expect(attached).toMatchObject({ mediaType: 'image/png', width: 40, height: 30, bytes: bytes.length })
    expect(attached.attachmentId).toMatch(/^sha256:[a-f0-9]{64}$/)
    const stored = await on.ctx.attachments.readImage({ ...attached, attachmentId: AttachmentId(attached.attachmentId), mediaType: 'image/png' })
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
      const attached = (result.value as unknown as { attached: ImageAttachmentRef }).attached
      expect(attached).toMatchObject({ mediaType: 'image/jpeg', width: size[0], height: size[1] })
      const stored = await storedImage(on, { ...attached, attachmentId: AttachmentId(String(attached.attachmentId)) })
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
