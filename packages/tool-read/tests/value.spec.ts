// read_file's declared output schema: what every reader returns validates against it, in one casing and with one tag.
import { readFileSync, readdirSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import iconv from 'iconv-lite'
import sharp from 'sharp'
import { afterEach, describe, expect, it } from 'vitest'
import LocalAttachmentStore from '@deepseek-ai/dsh-attachment-local'
import { validateJsonSchemaValue, type JsonSchemaNode } from '@deepseek-ai/dsh-tools'
import { execTool, makeTmpDir, removeTmpDir, textOf, type Host } from '@gencode-ai/testkit'
import { makePdf, readHost } from './harness.ts'

let host: Host | undefined
let home: string | undefined
afterEach(async () => {
  await host?.dispose()
  host = undefined
  if (home !== undefined) await removeTmpDir(home)
  home = undefined
})

/** tool-read on a route that takes images, with an attachment store: every reader can give its fullest value. */
async function fullHost(): Promise<Host> {
  host = await readHost({}, { imageInput: true })
  home = await makeTmpDir('dsh-home-')
  await host.ctx.plugin(LocalAttachmentStore, { dshHome: home })
  return host
}

function outputSchema(on: Host): JsonSchemaNode {
  const tool = on.ctx.tools.get('read_file')
  if (tool === undefined) throw new Error('read_file is not registered')
  return tool.output.schema
}

/** Every object key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)])
}

async function valueOf(on: Host, file_path: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await execTool(on.ctx, 'read_file', { file_path, ...args }, { agent: on.agent() })
  if (result.isError) throw new Error(textOf(result))
  return result.value as Record<string, unknown>
}

async function png(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } }).png().toBuffer()
}

async function notebook(plot: Buffer): Promise<string> {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: 'python3', language: 'python' } },
    cells: [
      { cell_type: 'markdown', metadata: {}, source: '# plots' },
      {
        cell_type: 'code', execution_count: 3, metadata: {}, source: 'plot()',
        outputs: [{ output_type: 'display_data', metadata: {}, data: { 'image/png': plot.toString('base64'), 'text/plain': '<Figure>' } }],
      },
      { cell_type: 'code', execution_count: null, metadata: {}, source: 'never_ran()', outputs: [] },
    ],
  })
}

describe('the declared output schema', () => {
  it('is a union of six closed variants tagged by kind, and the model-facing schema leaves it out', async () => {
    const on = await readHost()
    const schema = outputSchema(on) as { oneOf: { additionalProperties: boolean, properties: { kind: { const: string } } }[] }
    expect(schema.oneOf.map((variant) => variant.properties.kind.const)).toEqual(['text', 'notebook', 'image', 'pdf', 'unchanged', 'deferred'])
    expect(schema.oneOf.every((variant) => !variant.additionalProperties)).toBe(true)
    const sent = on.ctx.tools.schemas().find((entry) => entry.name === 'read_file')
    expect(Object.keys(sent ?? {}).sort()).toEqual(['description', 'name', 'parameters'])
  })

  it('every reader\'s value validates against it, with snake_case keys and `kind` its only tag', async () => {
    const on = await fullHost()
    const plot = await png(64, 48)
    await writeFile(join(on.cwd, 'bad.txt'), Buffer.concat([Buffer.from('ok\n'), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from('\nend\n')]))
    await writeFile(join(on.cwd, 'legacy.txt'), iconv.encode('Привет, как дела? Это проверка кодировки.\n'.repeat(20), 'koi8-r'))
    await writeFile(join(on.cwd, 'pic.png'), await png(40, 30))
    await writeFile(join(on.cwd, 'plots.ipynb'), await notebook(plot))
    await writeFile(join(on.cwd, 'doc.pdf'), await makePdf(12))
    const schema = outputSchema(on)
    const values = [
      await valueOf(on, 'bad.txt', { encoding: 'utf-8' }),
      await valueOf(on, 'legacy.txt'),
      await valueOf(on, 'plots.ipynb'),
      await valueOf(on, 'pic.png'),
      await valueOf(on, 'doc.pdf'),
    ]
    expect(values.map((value) => value.kind)).toEqual(['text', 'text', 'notebook', 'image', 'pdf'])
    for (const value of values) {
      expect(validateJsonSchemaValue(schema, value)).toEqual([])
      expect(keysOf(value).filter((key) => !/^[a-z][a-z0-9_]*$/u.test(key))).toEqual([])
      expect(value).not.toHaveProperty('type')
    }
    const [bad, legacy, nb, image, pdf] = values
    expect(bad).toMatchObject({ start_line: 1, total_lines: 3, total_exact: true, cut_lines: 0, byte_capped: false, first_invalid_line: 2 })
    expect(legacy).toMatchObject({ encoding: expect.any(String), total_lines: 20 })
    expect(nb).toMatchObject({ language: 'python', start_cell: 1, total_cells: 3, byte_capped: false })
    type Cell = { execution_count?: number | null, outputs: { image?: { media_type: string, attached: Record<string, unknown> | null } }[] }
    const cells = nb!.cells as Cell[]
    expect(cells.map((cell) => cell.execution_count)).toEqual([undefined, 3, null])
    expect(cells[1]!.outputs[0]!.image).toMatchObject({ media_type: 'image/png', attached: { media_type: 'image/png', width: 64, height: 48 } })
    expect(image!.attached).toMatchObject({ attachment_id: expect.stringMatching(/^sha256:/u), media_type: 'image/png', width: 40, height: 30 })
    expect(pdf).toMatchObject({ pages_total: 12, next: '11-12' })
  })

  it('refuses the camelCase shape, a second tag, and a key no variant declares', async () => {
    const on = await readHost()
    await writeFile(join(on.cwd, 'a.txt'), 'one\ntwo\n')
    await writeFile(join(on.cwd, 'doc.pdf'), await makePdf(1))
    const schema = outputSchema(on)
    const { start_line, ...text } = await valueOf(on, 'a.txt')
    const pdf = await valueOf(on, 'doc.pdf')
    expect(validateJsonSchemaValue(schema, { ...text, start_line })).toEqual([])
    expect(validateJsonSchemaValue(schema, { ...text, startLine: start_line })).not.toEqual([])
    expect(validateJsonSchemaValue(schema, { ...pdf, type: 'pdf' })).not.toEqual([])
    expect(validateJsonSchemaValue(schema, { ...text, start_line, kind: 'pdf' })).not.toEqual([])
    expect(validateJsonSchemaValue(schema, { ...text, start_line, extra: 1 })).not.toEqual([])
  })
})

describe('module structure', () => {
  it('reader.ts and the readers share value types through value.ts: no relative import cycle in src', () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
    // Every file, the rooms' included (src/formats/<room>/, src/session/, src/call/).
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => join(src, name))
    const imports = new Map(files.map((file) => {
      const text = readFileSync(file, 'utf8')
      return [file, [...text.matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gu)].map((match) => resolve(dirname(file), match[1]!))]
    }))
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (file: string, path: string[]): void => {
      state.set(file, 'open')
      for (const next of imports.get(file) ?? []) {
        if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), file, next].map((f) => f.slice(src.length + 1)).join(' -> '))
        else if (!state.has(next)) visit(next, [...path, file])
      }
      state.set(file, 'done')
    }
    for (const file of files) if (!state.has(file)) visit(file, [])
    expect(imports.get(join(src, 'reader.ts'))?.length).toBeGreaterThan(0)
    expect(cycles).toEqual([])
  })

  it('imports run one way: rooms never reach the call\'s flow or the session rules; render.ts reaches only renderers', () => {
    const src = join(dirname(fileURLToPath(import.meta.url)), '..', 'src')
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts'))
    const importsOf = (file: string) => [...readFileSync(join(src, file), 'utf8').matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/gu)]
      .map((match) => relative(src, resolve(dirname(join(src, file)), match[1]!)))
    const wrong: string[] = []
    for (const file of files) {
      for (const target of importsOf(file)) {
        const room = /^formats\/([^/]+)\//u.exec(file)?.[1]
        if (room !== undefined && /^(?:session|call)\/|^(?:tool|render|present|index)\.ts$|^formats\/pick\.ts$/u.test(target)) wrong.push(`${file} -> ${target}`)
        if (/^formats\/[^/]+\/render\.ts$/u.test(file) && target.endsWith('/reader.ts')) wrong.push(`${file} -> ${target}`)
        if (file === 'render.ts' && !/^(?:formats|session)\/[^/]+\/render\.ts$|^session\/render\.ts$|^value\.ts$/u.test(target)) wrong.push(`${file} -> ${target}`)
      }
    }
    expect(files).toContain('formats/text/reader.ts')
    expect(wrong).toEqual([])
  })
})
