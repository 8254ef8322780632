/**
 * Notebooks as Jupyter shows them, on both compositions: nbformat 3 (worksheets) read, cells of
 * unknown types shown without refusing the notebook, error tracebacks kept without terminal
 * escapes, and PNG/JPEG outputs attached through the real attachment store for an image route
 * (within the store's per-message budget), described otherwise.
 */
import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import type { ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import { execTool, makeTmpDir, removeTmpDir, runTurn, textOf, textTurn, toolTurn, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

/** A 64x48 plot: left half red, right half blue. */
async function plot(format: 'png' | 'jpeg'): Promise<Buffer> {
  const half = { width: 32, height: 48, channels: 3, background: '#0000ff' } as const
  const right = await sharp({ create: half }).png().toBuffer()
  const image = sharp({ create: { ...half, width: 64, background: '#ff0000' } }).composite([{ input: right, left: 32, top: 0 }])
  return format === 'png' ? image.png().toBuffer() : image.jpeg({ quality: 95 }).toBuffer()
}

/** Base64 in nbformat's multiline form: lines of 76 characters. */
function lines(data: Buffer): string[] {
  return data.toString('base64').match(/.{1,76}/gu)?.map((line) => `${line}\n`) ?? []
}

const ESC = '\u001b'

const v3 = (png: Buffer) => ({
  nbformat: 3,
  nbformat_minor: 0,
  metadata: { name: 'old' },
  worksheets: [{
    cells: [
      { cell_type: 'heading', level: 2, metadata: {}, source: ['Results'] },
      { cell_type: 'markdown', metadata: {}, source: ['Some *notes*.'] },
      {
        cell_type: 'code', collapsed: false, input: ['x = 1\n', 'x + 1'], language: 'python', metadata: {}, prompt_number: 3,
        outputs: [
          { output_type: 'stream', stream: 'stdout', text: ['hello\n'] },
          { output_type: 'pyout', prompt_number: 3, metadata: {}, text: ['2'] },
        ],
      },
      {
        cell_type: 'code', input: 'plot()', language: 'python', metadata: {}, prompt_number: 4,
        outputs: [{ output_type: 'display_data', metadata: {}, png: png.toString('base64'), text: ['<matplotlib.figure.Figure>'] }],
      },
      {
        cell_type: 'code', input: '1/0', language: 'python', metadata: {}, prompt_number: 5,
        outputs: [{
          output_type: 'pyerr', ename: 'ZeroDivisionError', evalue: 'integer division or modulo by zero',
          traceback: [`${ESC}[0;31mZeroDivisionError${ESC}[0m Traceback (most recent call last)`, `${ESC}[0;31mZeroDivisionError${ESC}[0m: integer division or modulo by zero`],
        }],
      },
      { cell_type: 'raw', metadata: {}, source: 'raw' },
    ],
    metadata: {},
  }],
})

const V3_TEXT = [
  '# Jupyter Notebook (python)',
  '# 6 cells',
  '',
  '## Cell 1 [markdown]',
  '## Results',
  '',
  '## Cell 2 [markdown]',
  'Some *notes*.',
  '',
  '## Cell 3 [code]',
  'In [3]:',
  '```',
  'x = 1',
  'x + 1',
  '```',
  '',
  '**Output:**',
  'hello',
  '2',
  '',
  '## Cell 4 [code]',
  'In [4]:',
  '```',
  'plot()',
  '```',
  '',
  '**Output:**',
  '<matplotlib.figure.Figure>',
  '[Image output]',
  '',
  '## Cell 5 [code]',
  'In [5]:',
  '```',
  '1/0',
  '```',
  '',
  '**Output:**',
  'Error: ZeroDivisionError: integer division or modulo by zero',
  'ZeroDivisionError Traceback (most recent call last)',
  'ZeroDivisionError: integer division or modulo by zero',
  '',
  '## Cell 6 [raw]',
  'raw',
].join('\n')

function withCells(cells: unknown[]): string {
  return JSON.stringify({ nbformat: 4, nbformat_minor: 5, metadata: { kernelspec: { language: 'python' } }, cells })
}

function code(n: number, outputs: unknown[]): unknown {
  return { cell_type: 'code', execution_count: n, metadata: {}, source: `cell${n}()`, outputs }
}

function display(mime: 'image/png' | 'image/jpeg', data: Buffer): unknown {
  return { output_type: 'display_data', metadata: {}, data: { [mime]: lines(data), 'text/plain': ['<Figure size 64x48>'] } }
}

for (const [composition, options] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' as const }], ['dsh-fs-local', {}]] as const) {
  describe(`notebooks as Jupyter shows them, on ${composition}`, () => {
    let host: Host
    beforeAll(async () => { host = await readHost({}, options) })
    afterAll(async () => { await host.dispose() })

    it('an nbformat 3 notebook (worksheets) is read: headings as markdown, input and prompt_number, pyout, pyerr', async () => {
      await writeFile(join(host.cwd, 'old.ipynb'), JSON.stringify(v3(await plot('png'))))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'old.ipynb' })
      expect(result.isError, textOf(result)).toBe(false)
      expect(textOf(result)).toBe(V3_TEXT)
    })

    it('an nbformat 3 notebook without worksheets names its format, not "malformed JSON"', async () => {
      await writeFile(join(host.cwd, 'v3.ipynb'), JSON.stringify({ nbformat: 3, metadata: {} }))
      expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'v3.ipynb' }))).toBe(
        `Error: cannot read "${join(host.cwd, 'v3.ipynb')}": malformed notebook: nbformat 3 notebook: "worksheets" must be a list`,
      )
    })

    it('a cell of an unknown type is shown as such; the notebook is read, also with limit=3', async () => {
      const cells = [
        { cell_type: 'markdown', metadata: {}, source: 'one' },
        code(1, []),
        { cell_type: 'markdown', metadata: {}, source: 'three' },
        { cell_type: 'widget', metadata: {}, source: ['state: 1'] },
        { cell_type: 'raw', metadata: {}, source: 'five' },
      ]
      await writeFile(join(host.cwd, 'odd.ipynb'), withCells(cells))
      const first = await execTool(host.ctx, 'read_file', { file_path: 'odd.ipynb', limit: 3 })
      expect(first.isError, textOf(first)).toBe(false)
      expect(textOf(first)).toMatch(/## Cell 3 \[markdown\]\nthree\n\n\(Showing cells 1-3 of 5\. Use offset=4 to continue\.\)$/u)
      const rest = await execTool(host.ctx, 'read_file', { file_path: 'odd.ipynb', offset: 4 })
      expect(textOf(rest)).toBe('# Jupyter Notebook (python)\n# 5 cells\n\n## Cell 4 [widget] (unknown cell type)\nstate: 1\n\n## Cell 5 [raw]\nfive')
      expect(rest.value).toMatchObject({ cells: [{ index: 4, type: 'widget', source: 'state: 1', outputs: [] }, { index: 5, type: 'raw' }] })
    })

    it('an error output keeps its traceback without terminal escapes, its end kept within the budget', async () => {
      const frames = Array.from({ length: 400 }, (_, i) => `${ESC}[0;32mFile "lib.py", line ${i}${ESC}[0m in ${ESC}[0;36mf${i}${ESC}[0m()`)
      const traceback = [`${ESC}[0;31m---------------------------------------------------------------------------${ESC}[0m`, ...frames, `${ESC}[0;31mRecursionError${ESC}[0m: deep`]
      await writeFile(join(host.cwd, 'err.ipynb'), withCells([code(1, [{ output_type: 'error', ename: 'RecursionError', evalue: 'deep', traceback }])]))
      const text = textOf(await execTool(host.ctx, 'read_file', { file_path: 'err.ipynb' }))
      expect(text).not.toContain(ESC)
      expect(text).toMatch(/\*\*Output:\*\*\nError: RecursionError: deep\n\[… \d+ earlier traceback lines cut\]\nFile "lib.py", line \d+ in f\d+\(\)\n/u)
      expect(text.endsWith('File "lib.py", line 399 in f399()\nRecursionError: deep')).toBe(true)
      const tail = text.slice(text.indexOf('cut]\n') + 5)
      expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096)
      expect(Buffer.byteLength(tail)).toBeGreaterThan(3000)
    })

    it('an error output whose name or value is not a string shows them empty, never "[object Object]"', async () => {
      await writeFile(join(host.cwd, 'odd-err.ipynb'), withCells([code(1, [{ output_type: 'error', ename: { name: 'E' }, evalue: ['a', 'b'], traceback: [] }])]))
      const text = textOf(await execTool(host.ctx, 'read_file', { file_path: 'odd-err.ipynb' }))
      expect(text).toMatch(/\*\*Output:\*\*\nError: : ?$/mu)
      expect(text).not.toContain('[object Object]')
      expect(text).not.toContain('a,b')
    })

    it('without an attachment store, image outputs stay "[Image output]" and nothing is attached', async () => {
      await writeFile(join(host.cwd, 'plot.ipynb'), withCells([code(1, [display('image/png', await plot('png'))])]))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'plot.ipynb' }, { agent: host.agent() })
      expect(result.content.map((block) => block.type)).toEqual(['text'])
      expect(textOf(result)).toContain('**Output:**\n<Figure size 64x48>\n[Image output]')
    })

    it('a notebook over maxFileBytes is refused before it is read', async () => {
      const small = await readHost({ maxFileBytes: 1024 }, options)
      try {
        // 8 GiB, sparse: a whole read would take minutes and the host's memory.
        const handle = await open(join(small.cwd, 'huge.ipynb'), 'w')
        await handle.truncate(8 * 1024 ** 3)
        await handle.close()
        const result = await execTool(small.ctx, 'read_file', { file_path: 'huge.ipynb' })
        expect(textOf(result)).toBe(`Error: cannot read "${join(small.cwd, 'huge.ipynb')}": ${8 * 1024 ** 3} bytes exceeds maxFileBytes (1024) for a file read whole — read a smaller file, or raise maxFileBytes in tool-read's config`)
      } finally {
        await small.dispose()
      }
    })
  })

  describe(`notebook plots attached for an image route, on ${composition}`, () => {
    let host: Host
    let home: string
    beforeAll(async () => {
      host = await readHost({}, { ...options, imageInput: true })
      home = await makeTmpDir('dsh-home-')
      await host.ctx.plugin(LocalAttachmentStore, { dshHome: home, maxImagesPerMessage: 2 })
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(home)
    })

    async function pixelsOf(ref: ImageAttachmentRef): Promise<{ left: number[], right: number[] }> {
      const stored = Buffer.from((await host.ctx.attachments.readImage(ref)).data)
      const { data, info } = await sharp(stored).removeAlpha().raw().toBuffer({ resolveWithObject: true })
      const at = (x: number) => [...data.subarray((24 * info.width + x) * 3, (24 * info.width + x) * 3 + 3)]
      return { left: at(8), right: at(56) }
    }

    it('PNG and JPEG outputs are attached after their cell, the text saying so; the budget is the store\'s per-message count', async () => {
      const png = await plot('png')
      const jpeg = await plot('jpeg')
      const cells = [
        { cell_type: 'markdown', metadata: {}, source: 'plots' },
        code(1, [display('image/png', png)]),
        code(2, [display('image/jpeg', jpeg)]),
        code(3, [display('image/png', png)]),
      ]
      await writeFile(join(host.cwd, 'plots.ipynb'), withCells(cells))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'plots.ipynb' }, { agent: host.agent() })
      expect(result.isError, textOf(result)).toBe(false)
      expect(result.content.map((block) => block.type)).toEqual(['text', 'image', 'text', 'image', 'text'])
      type Text = { text: string }
      type Image = { attachment: ImageAttachmentRef }
      const [first, image1, second, image2, last] = result.content as unknown as [Text, Image, Text, Image, Text]
      expect(first.text).toMatch(/## Cell 2 \[code\]\nIn \[1\]:\n```\ncell1\(\)\n```\n\n\*\*Output:\*\*\n<Figure size 64x48>\n\[Image output: 64x48 px, attached as image\/png\]$/u)
      expect(second.text).toBe('## Cell 3 [code]\nIn [2]:\n```\ncell2()\n```\n\n**Output:**\n<Figure size 64x48>\n[Image output: 64x48 px, attached as image/jpeg]')
      expect(last.text).toBe('## Cell 4 [code]\nIn [3]:\n```\ncell3()\n```\n\n**Output:**\n<Figure size 64x48>\n[Image output: not attached, this call\'s image budget is spent; read offset=4 to see it]')
      expect(image1.attachment).toMatchObject({ mediaType: 'image/png', width: 64, height: 48 })
      expect(image2.attachment).toMatchObject({ mediaType: 'image/jpeg', width: 64, height: 48 })
      // The store holds the plots themselves: red on the left, blue on the right.
      expect(await pixelsOf(image1.attachment)).toEqual({ left: [255, 0, 0], right: [0, 0, 255] })
      const lossy = await pixelsOf(image2.attachment)
      expect([lossy.left[0]! > 240 && lossy.left[2]! < 16, lossy.right[2]! > 240 && lossy.right[0]! < 16]).toEqual([true, true])
      expect(result.value).toMatchObject({
        cells: [{ index: 1 }, { index: 2, outputs: [{ image: { media_type: 'image/png', attached: { media_type: 'image/png', width: 64 } } }] },
          { index: 3, outputs: [{ image: { attached: { media_type: 'image/jpeg' } } }] }, { index: 4, outputs: [{ image: { attached: null } }] }],
      })
      // The one past the budget, read from its own offset.
      const again = await execTool(host.ctx, 'read_file', { file_path: 'plots.ipynb', offset: 4 }, { agent: host.agent() })
      expect(again.content.map((block) => block.type)).toEqual(['text', 'image'])
    })

    it('an nbformat 3 plot (its "png" key) is attached too', async () => {
      await writeFile(join(host.cwd, 'old.ipynb'), JSON.stringify(v3(await plot('png'))))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'old.ipynb', offset: 4, limit: 1 }, { agent: host.agent() })
      // The cell, its plot, then the continuation footer.
      expect(result.content.map((block) => block.type)).toEqual(['text', 'image', 'text'])
      expect(textOf(result)).toContain('<matplotlib.figure.Figure>\n[Image output: 64x48 px, attached as image/png]')
      const ref = (result.content[1] as { attachment: ImageAttachmentRef }).attachment
      expect(await pixelsOf(ref)).toEqual({ left: [255, 0, 0], right: [0, 0, 255] })
    })

    it('a plot that does not decode is described, and the notebook still read', async () => {
      const broken = (await plot('png')).subarray(0, 60)
      await writeFile(join(host.cwd, 'broken.ipynb'), withCells([code(1, [display('image/png', broken)])]))
      const result = await execTool(host.ctx, 'read_file', { file_path: 'broken.ipynb' }, { agent: host.agent() })
      expect(result.isError).toBe(false)
      expect(result.content.map((block) => block.type)).toEqual(['text'])
      expect(textOf(result)).toMatch(/<Figure size 64x48>\n\[Image output: not attached \(corrupt PNG image \(.+\) — regenerate the image, or read another file\)\]$/u)
    })

    it('a route without image input: "[Image output]", no image blocks', async () => {
      const plain = await readHost({}, options)
      const dir = await makeTmpDir('dsh-home-')
      try {
        await plain.ctx.plugin(LocalAttachmentStore, { dshHome: dir })
        await writeFile(join(plain.cwd, 'plot.ipynb'), withCells([code(1, [display('image/png', await plot('png'))])]))
        const result = await execTool(plain.ctx, 'read_file', { file_path: 'plot.ipynb' }, { agent: plain.agent() })
        expect(result.content.map((block) => block.type)).toEqual(['text'])
        expect(textOf(result)).toContain('<Figure size 64x48>\n[Image output]')
      } finally {
        await plain.dispose()
        await removeTmpDir(dir)
      }
    })
  })
}

describe('through the agent loop', () => {
  it('the model\'s next request carries the notebook\'s plot as an image, after the cell text', async () => {
    const host = await readHost({}, {
      sandbox: 'workspace-write',
      imageInput: true,
      script: [toolTurn({ id: 'n', name: 'read_file', args: { file_path: 'plot.ipynb' } }), textTurn('done')],
    })
    const home = await makeTmpDir('dsh-home-')
    try {
      await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
      await writeFile(join(host.cwd, 'plot.ipynb'), withCells([code(1, [display('image/png', await plot('png'))])]))
      await runTurn(host.ctx, host.agent())
      const messages = host.adapter.requests[1]?.messages ?? []
      const result = messages.flatMap((message) => message.content).find((part) => part.type === 'tool-result') as
        { content: { type: string, text?: string, attachment?: ImageAttachmentRef }[] } | undefined
      expect(result?.content.map((part) => part.type)).toEqual(['text', 'image'])
      expect(result?.content[0]?.text).toMatch(/<Figure size 64x48>\n\[Image output: 64x48 px, attached as image\/png\]$/u)
      const ref = result?.content[1]?.attachment
      expect(ref).toMatchObject({ mediaType: 'image/png', width: 64, height: 48, name: 'plot.ipynb-cell1-1.png' })
      // The store resolves what the model was sent.
      expect((await sharp(Buffer.from((await host.ctx.attachments.readImage(ref!)).data)).metadata()).width).toBe(64)
    } finally {
      await host.dispose()
      await removeTmpDir(home)
    }
  })
})
