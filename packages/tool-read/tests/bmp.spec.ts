/**
 * BMP decoding is bounded: the pixels are decoded only for an image being attached, never above
 * MAX_DECODE_PIXELS, and the decode yields so an abort lands between rows.
 */
import { open } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { MAX_DECODE_PIXELS, decodeBmp } from '../src/bmp.ts'
import { readHost } from './harness.ts'

// Watch the decoder (the real one runs): "not decoded" must be observable, not inferred from speed.
vi.mock('../src/bmp.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/bmp.ts')>()
  return { ...actual, decodeBmp: vi.fn(actual.decodeBmp) }
})

let host: Host | undefined
let home: string | undefined
afterEach(async () => {
  await host?.dispose()
  host = undefined
  if (home !== undefined) await removeTmpDir(home)
  home = undefined
  vi.mocked(decodeBmp).mockClear()
})

async function imageHost(options: { store: boolean, imageInput: boolean }): Promise<Host> {
  host = await readHost({}, { imageInput: options.imageInput })
  if (options.store) {
    home = await makeTmpDir('dsh-home-')
    await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
  }
  return host
}

/** A BMP header (BITMAPINFOHEADER, 2-colour palette for 1 bit) and the size of the whole file. */
function bmpHeader(width: number, height: number, bpp: number, compression = 0): { header: Buffer, size: number } {
  const paletteBytes = bpp === 1 ? 8 : 0
  const dataOffset = 54 + paletteBytes
  const size = dataOffset + Math.floor((bpp * width + 31) / 32) * 4 * height
  const header = Buffer.alloc(dataOffset)
  header.write('BM', 0, 'latin1')
  header.writeUInt32LE(size, 2)
  header.writeUInt32LE(dataOffset, 10)
  header.writeUInt32LE(40, 14)
  header.writeInt32LE(width, 18)
  header.writeInt32LE(height, 22)
  header.writeUInt16LE(1, 26)
  header.writeUInt16LE(bpp, 28)
  header.writeUInt32LE(compression, 30)
  if (bpp === 1) {
    header.writeUInt32LE(2, 46)
    header.writeUInt32LE(0xffffff, 58) // colour 1 white, colour 0 black
  }
  return { header, size }
}

/** A BMP file of the given geometry: the header, then zero pixels (sparse on disk). */
async function writeBmp(path: string, width: number, height: number, bpp: number, compression = 0): Promise<number> {
  const { header, size } = bmpHeader(width, height, bpp, compression)
  const handle = await open(path, 'w')
  try {
    await handle.write(header, 0, header.length, 0)
    await handle.truncate(size)
  } finally {
    await handle.close()
  }
  return size
}

describe('BMP pixels are decoded only to attach', () => {
  it('no attachment store, or a route without image input: the header alone, no decode', async () => {
    const on = await imageHost({ store: false, imageInput: true })
    await writeBmp(join(on.cwd, 'a.bmp'), 64, 48, 24)
    expect(textOf(await execTool(on.ctx, 'read_file', { file_path: 'a.bmp' }, { agent: on.agent() })))
      .toBe('BMP image, 64x48 px, 9.1 KB. Not attached: no attachment store is composed.')
    await host!.dispose()
    const noImages = await imageHost({ store: true, imageInput: false })
    await writeBmp(join(noImages.cwd, 'a.bmp'), 64, 48, 24)
    expect(textOf(await execTool(noImages.ctx, 'read_file', { file_path: 'a.bmp' }, { agent: noImages.agent() })))
      .toBe('BMP image, 64x48 px, 9.1 KB. Not attached: the current model does not take image input.')
    expect(decodeBmp).not.toHaveBeenCalled()
  })

  it('attached: decoded once, and the store holds the PNG', async () => {
    const on = await imageHost({ store: true, imageInput: true })
    await writeBmp(join(on.cwd, 'a.bmp'), 64, 48, 24)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'a.bmp' }, { agent: on.agent() })
    expect(result.isError).toBe(false)
    expect(result.content[1]).toMatchObject({ type: 'image', attachment: { mediaType: 'image/png', width: 64, height: 48 } })
    expect(decodeBmp).toHaveBeenCalledTimes(1)
  })

  // 16400 x 16400 at 1 bit: a 32 MB file (under maxFileBytes) whose RGBA would be ~1.08 GB.
  const side = 16400
  it(`over ${MAX_DECODE_PIXELS} pixels: described when not attached, refused before decoding when it would be`, async () => {
    expect(side * side).toBeGreaterThan(MAX_DECODE_PIXELS)
    const plain = await imageHost({ store: false, imageInput: true })
    const size = await writeBmp(join(plain.cwd, 'huge.bmp'), side, side, 1)
    expect(textOf(await execTool(plain.ctx, 'read_file', { file_path: 'huge.bmp' }, { agent: plain.agent() })))
      .toBe(`BMP image, ${side}x${side} px, ${(size / 1024 / 1024).toFixed(1)} MB. Not attached: no attachment store is composed.`)
    await host!.dispose()

    const on = await imageHost({ store: true, imageInput: true })
    await writeBmp(join(on.cwd, 'huge.bmp'), side, side, 1)
    const result = await execTool(on.ctx, 'read_file', { file_path: 'huge.bmp' }, { agent: on.agent() })
    expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_TOO_LARGE')
    expect(textOf(result)).toBe(
      `Error: cannot read "${join(on.cwd, 'huge.bmp')}": the BMP image is ${side}x${side} px (${side * side} pixels), more than the ${MAX_DECODE_PIXELS} read_file decodes to attach — scale it down below that`,
    )
    expect(decodeBmp).not.toHaveBeenCalled()
  })

  it('the decode yields between rows, so an abort stops it', async () => {
    // 24-bit 2048 x 2048: 4 Mpx, several slices of rows.
    const { header, size } = bmpHeader(2048, 2048, 24)
    const data = Buffer.alloc(size)
    header.copy(data)
    const actual = (await vi.importActual<typeof import('../src/bmp.ts')>('../src/bmp.ts')).decodeBmp
    const controller = new AbortController()
    const decoding = actual(data, controller.signal)
    // Fires only if the decoder gives the event loop a turn before it finishes.
    setImmediate(() => controller.abort())
    await expect(decoding).rejects.toMatchObject({ message: 'read aborted', code: 'FS_ABORTED' })
    // Unaborted, the same bytes decode.
    await expect(actual(data, new AbortController().signal)).resolves.toMatchObject({ width: 2048, height: 2048 })
  })
})

describe('unsupported BMP variants', () => {
  for (const [what, bpp, compression, reason] of [
    ['RLE8', 8, 1, 'RLE-compressed BMP is not supported'],
    ['RLE4', 4, 2, 'RLE-compressed BMP is not supported'],
    ['embedded JPEG', 24, 4, 'BMP compression 4 is not supported'],
    ['2-bit', 2, 0, '2-bit BMP is not supported'],
  ] as const) {
    it(`${what} is refused with the reason and what to do`, async () => {
      const on = await imageHost({ store: false, imageInput: false })
      await writeBmp(join(on.cwd, 'x.bmp'), 8, 8, bpp, compression)
      const result = await execTool(on.ctx, 'read_file', { file_path: 'x.bmp' })
      expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_NOT_TEXT')
      expect(textOf(result)).toBe(`Error: cannot read "${join(on.cwd, 'x.bmp')}": ${reason}; convert it to PNG`)
    })
  }
})

