/** The read_file tool: arguments, the reader table the content sniff picks from, the observation, the UI card. */

import { extname } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, FsVersion, type FsErrorCode } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { JsonValue } from '@deepseek-ai/dsh-session'
import { defineTool, type GenericCallView, type ToolDefinition, type ToolResult, type ToolResultView } from '@deepseek-ai/dsh-tools'
import { blanksAsAbsent, echo, hasRawBytes, type OutsideGate, place, type Placement, quoted, shownPath, unescapeName } from '@gencode-ai/dsh-tool-common'
import type { Config } from './config.ts'
import { checkEncoding } from './encoding.ts'
import { imageFormatForPath, readImage, sniffImage } from './image.ts'
import { readNotebook } from './notebook.ts'
import { isPdf, readPdf } from './pdf.ts'
import type { Reader, ReadRequest, ReadResult } from './reader.ts'
import { renderValue, withGrowth } from './render.ts'
import { Source } from './source.ts'
import { localPath, statRegular } from './target.ts'
import { readText } from './text.ts'
import { placeEscaped } from './escaped-path.ts'
import { VALUE_SCHEMA, type ReadValue } from './value.ts'

type Kind = 'text' | 'image' | 'notebook' | 'pdf'

const READERS: Readonly<Record<Kind, Reader>> = { text: readText, image: readImage, notebook: readNotebook, pdf: readPdf }
const KIND_NAMES: Readonly<Record<Kind, string>> = { text: 'text', image: 'an image', notebook: 'a notebook', pdf: 'a PDF' }

/** A PDF or an image by content whatever the name (BMP's two-byte magic only with its extension), a notebook by name, else text. */
function pick(head: Uint8Array, path: string, encoding: string | undefined): Kind {
  if (isPdf(head, encoding)) return 'pdf'
  const sniffed = sniffImage(head)
  if (imageFormatForPath(path) !== undefined || (sniffed !== undefined && sniffed !== 'bmp')) return 'image'
  return extname(path).toLowerCase() === '.ipynb' ? 'notebook' : 'text'
}

type ReadArgsView = { file_path: string, offset?: number, limit?: number }

export function presentCall(args: ReadArgsView): GenericCallView {
  const { offset, limit } = args
  const window = limit !== undefined
    ? ` (${offset ?? 1} - ${(offset ?? 1) + limit - 1})`
    : offset !== undefined ? ` (from ${offset})` : ''
  return {
    card: 'generic',
    title: `Read ${args.file_path}${window}`,
    kind: 'read',
    locations: [{ path: args.file_path, line: offset ?? 1 }],
  }
}

/** A text read's window, for the read card on replay; lines as one string (the host freezes meta node by node: 2000 objects cost more). */
function presentationMeta(value: ReadValue): JsonValue {
  if (value.kind !== 'text') return { kind: value.kind, path: value.path }
  return { kind: 'text', path: value.path, offset: value.start_line, text: value.lines.join('\n'), count: value.lines.length, totalLines: value.total_lines }
}

export function presentResult(_args: ReadArgsView, result: ToolResult): ToolResultView | undefined {
  // Replayed meta is untrusted JSON: anything but a well-formed text window gets the generic card.
  const { kind, path, offset, text, count, totalLines } = (result.meta ?? {}) as Record<string, unknown>
  if (result.isError || kind !== 'text' || typeof path !== 'string' || typeof text !== 'string') return undefined
  if (!Number.isInteger(offset) || !Number.isInteger(count) || !Number.isInteger(totalLines)) return undefined
  const first = offset as number
  const lines = count === 0 ? [] : text.split('\n').map((line, i) => ({ number: first + i, text: line }))
  return { card: 'read', path, offset: first, lines, totalLines: totalLines as number, content: result.content }
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) {
    throw new HarnessError(`${name} must be a positive integer (got ${value}); lines and cells are numbered from 1`, 'INVALID_ARGS')
  }
  return value
}

/** The reader the content sniff picks, after the checks that the arguments fit it. */
async function readAs(source: Source, config: Config, options: ReadRequest['options']): Promise<ReadResult> {
  const kind = pick(await source.head(), source.target.displayPath, options.encoding)
  const file = `${echo(source.target.displayPath)} is ${KIND_NAMES[kind]}`
  if (options.pages !== undefined && kind !== 'pdf') {
    throw new HarnessError(`pages applies to PDF files; ${file} — omit pages, and use offset/limit for lines`, 'INVALID_ARGS')
  }
  if (options.encoding !== undefined && kind !== 'text') {
    throw new HarnessError(`encoding applies to text files; ${file} — omit encoding`, 'INVALID_ARGS')
  }
  return await READERS[kind]({ source, config, options })
}

export function readFileTool(ctx: Context, config: Config, gate: OutsideGate): ToolDefinition {
  const tool = defineTool({
    name: config.toolName,
    description: 'Read a file: numbered text lines (any encoding), PDF pages, images, .ipynb.',
    parameters: {
      file_path: { type: 'string', required: true, description: 'Absolute, or relative to the workspace.' },
      offset: { type: 'integer', description: '1-based first line (cell for .ipynb).' },
      limit: { type: 'integer', description: `Lines (cells) to read; default ${config.maxEntries}.` },
      encoding: { type: 'string', description: 'e.g. gbk; default: detected.' },
      pages: { type: 'string', description: 'PDF pages, e.g. "1-5,8"; default 1-10, max 20.' },
    },
    output: {
      schema: VALUE_SCHEMA,
      render: (_args, value) => withGrowth(renderValue(value), value),
      presentationMeta: (_args, value) => presentationMeta(value),
    },
    // Reads change nothing; a racing write only makes a later guarded edit fail stale.
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      const path = args.file_path
      if (path.trim() === '') throw new HarnessError('file_path must not be empty; pass the path of a file', 'INVALID_ARGS')
      // Node refuses NUL in a path with a message that names no argument.
      if (path.includes('\0')) throw new HarnessError(`file_path must not contain a NUL character (got ${quoted(path)}); pass the path of a file`, 'INVALID_ARGS')
      checkEncoding(args.encoding)
      const options = {
        offset: positive(args.offset, 'offset', 1),
        // A limit above the cap is served up to the cap; the footer says how to continue.
        limit: Math.min(positive(args.limit, 'limit', config.maxEntries), config.maxEntries),
        encoding: args.encoding,
        pages: args.pages,
      }
      // The outside-workspace policy ran as a tools/pre-execute gate; check again what we open.
      const literal = await place(ctx, exec, path).catch((error: unknown) => {
        throw osError(error, echo(path))
      })
      // Decoding is a second try: any failure of it leaves the path as written, whose errors say what is wrong.
      const literalExists = async () => await ctx.fs.stat(literal.target, exec.signal).catch(() => undefined) !== undefined
      const decoded = unescapeName(path) === undefined || await literalExists()
        ? undefined
        : await placeEscaped(ctx, exec, path, literal, localPath(ctx, literal.target) !== undefined).catch(() => undefined)
      if (decoded === undefined) gate.verify(exec, path, literal)
      else if (!decoded.inside && config.outsideWorkspace !== 'allow') throw outsideDecoded(ctx, path, decoded)
      const { target } = decoded ?? literal
      // A name with bytes that are not UTF-8 exists only for node:fs: no provider stat, no observation the host could use.
      const raw = hasRawBytes(String(target.targetKey))
      try {
        const info = raw ? { version: FsVersion(''), type: 'file' as const } : await statRegular(ctx, exec, target, 'list_directory')
        const source = await Source.open(ctx, exec, target, info, config.maxFileBytes, localPath(ctx, target), 'list_directory')
        try {
          const { value, observe } = await readAs(source, config, options)
          const grown = await source.grown()
          if (grown !== undefined) return { ...value, grew: { from: source.info.size ?? 0, to: grown } }
          // Record what the model has now seen, so dsh-tool-fs's write/edit accept a follow-up edit.
          if (observe && !raw) ctx.emit('fs/observed', target, { kind: 'present', version: info.version }, exec)
          return value
        } finally {
          await source.close()
        }
      } catch (error) {
        throw osError(echoed(error, target.displayPath), echo(target.displayPath))
      }
    },
    presentCall,
    presentResult,
  })
  return blanksAsAbsent(tool, ['file_path'])
}

/** A decoded path outside the workspace: the pre-execute gate saw only the path as written, so there was no asking. */
function outsideDecoded(ctx: Context, path: string, placement: Placement): FsError {
  const real = ctx.fs.processPath(placement.target)
  return new FsError(`file_path ${echo(path)} is outside the workspace ${shownPath(placement.root.displayPath)} (it resolves to ${shownPath(real)}) — read a file inside the workspace`, 'FS_PERMISSION_DENIED')
}

/** A reader's error with the path it names escaped and cut as every echo is (readers quote the path as it is). */
function echoed(error: unknown, displayPath: string): unknown {
  const shown = echo(displayPath)
  if (!(error instanceof Error) || shown === `"${displayPath}"`) return error
  error.message = error.message.replaceAll(JSON.stringify(displayPath), shown).replaceAll(`"${displayPath}"`, shown)
  return error
}

/** A raw OS error (a name too long, a symlink loop, permission denied, a vanished file) as an FsError naming the file. */
function osError(error: unknown, file: string): unknown {
  const code = (error as { code?: unknown } | null)?.code
  if (error instanceof HarnessError || typeof code !== 'string' || !code.startsWith('E')) return error
  const reasons: Record<string, [string, FsErrorCode]> = {
    ENAMETOOLONG: ['a name in the path is too long', 'FS_IO_ERROR'],
    ELOOP: ['the path loops through symlinks', 'FS_IO_ERROR'],
    EACCES: ['permission denied', 'FS_PERMISSION_DENIED'],
    EPERM: ['permission denied', 'FS_PERMISSION_DENIED'],
    ENOENT: ['it vanished while being read', 'FS_NOT_FOUND'],
    ENOTDIR: ['a part of the path is not a directory', 'FS_NOT_FOUND'],
  }
  const [reason, fsCode] = reasons[code] ?? [`${code} from the operating system`, 'FS_IO_ERROR']
  return new FsError(`cannot read ${file}: ${reason}`, fsCode, { cause: error })
}
