/** The read_file tool: arguments, routing by file kind, the observation, and the UI card. */

import { extname } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsErrorCode, type FsTarget } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { defineTool, type ToolDefinition, type ToolRunContext } from '@deepseek-ai/dsh-tools'
import type { Config } from './config.ts'
import { imageFormatForPath, readImage } from './image.ts'
import { MalformedNotebook, parseNotebook, windowCells } from './notebook.ts'
import { presentCall, presentResult, presentationMeta } from './present.ts'
import { renderValue } from './render.ts'
import { statRegular } from './target.ts'
import { readText } from './text.ts'
import type { NotebookValue, ReadValue } from './value.ts'
import { quoted } from './quote.ts'
import { place, type OutsideGate } from './workspace.ts'

export interface ReadArgs {
  file_path: string
  offset?: number
  limit?: number
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) {
    throw new HarnessError(`${name} must be a positive integer (got ${value}); lines and cells are numbered from 1`, 'INVALID_ARGS')
  }
  return value
}

export function readFileTool(ctx: Context, config: Config, gate: OutsideGate): ToolDefinition {
  return defineTool({
    name: config.toolName,
    description: 'Read a file: text as numbered lines, images (png/jpg/gif/webp/bmp), .ipynb notebooks.',
    parameters: {
      file_path: { type: 'string', required: true, description: 'Absolute, or relative to the workspace.' },
      offset: { type: 'integer', description: '1-based first line (cell for .ipynb).' },
      limit: { type: 'integer', description: `Lines (cells) to read; default ${config.maxEntries}.` },
    },
    output: {
      schema: { type: 'json' },
      render: (_args, value) => renderValue(value as ReadValue),
      presentationMeta: (_args, value) => presentationMeta(value as ReadValue),
    },
    // Reads change nothing; a racing write only makes a later guarded edit fail stale.
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      return await execute(ctx, config, gate, args, exec)
    },
    presentCall,
    presentResult,
  })
}

async function execute(ctx: Context, config: Config, gate: OutsideGate, args: ReadArgs, exec: ToolRunContext): Promise<ReadValue> {
  if (args.file_path.trim() === '') throw new HarnessError('file_path must not be empty; pass the path of a file', 'INVALID_ARGS')
  // Node refuses NUL in a path with a message that names no argument.
  if (args.file_path.includes('\0')) throw new HarnessError(`file_path must not contain a NUL character (got ${quoted(args.file_path)}); pass the path of a file`, 'INVALID_ARGS')
  const offset = positive(args.offset, 'offset', 1)
  // A limit above the cap is served up to the cap; the footer says how to continue.
  const limit = Math.min(positive(args.limit, 'limit', config.maxEntries), config.maxEntries)

  // The outside-workspace policy ran as a tools/pre-execute gate; check again what we open.
  let placement
  try {
    placement = await place(ctx, exec, args.file_path)
  } catch (error) {
    throw osError(error, quoted(args.file_path))
  }
  gate.verify(exec, args.file_path, placement)
  const { target } = placement
  const path = target.displayPath
  try {
    return await readTarget(ctx, config, exec, target, offset, limit)
  } catch (error) {
    throw osError(error, JSON.stringify(path))
  }
}

/**
 * A raw OS error (from realpath, open or read: a name too long, a symlink loop, permission
 * denied, a file that vanished) as an FsError that names the file; the host's own errors pass.
 */
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

async function readTarget(ctx: Context, config: Config, exec: ToolRunContext, target: FsTarget, offset: number, limit: number): Promise<ReadValue> {
  const info = await statRegular(ctx, exec, target, 'list_directory')
  const path = target.displayPath
  let value: ReadValue

  const format = imageFormatForPath(path)
  if (format !== undefined) {
    tooLarge(info.size, config.maxFileBytes, path)
    value = { kind: 'image', path, ...await readImage(ctx, exec, target, format, config.maxFileBytes) }
  } else if (extname(path).toLowerCase() === '.ipynb') {
    tooLarge(info.size, config.maxFileBytes, path)
    value = await readNotebook(ctx, exec, target, offset, limit, config)
  } else {
    const window = await readText(ctx, exec, target, info, {
      offset,
      limit,
      maxLineLength: config.maxLineLength,
      maxBytes: config.maxBytes,
    }, config.maxFileBytes)
    value = { kind: 'text', path, ...window }
  }
  // Record what the model has now seen, so dsh-tool-fs's write/edit accept a follow-up edit.
  ctx.emit('fs/observed', target, { kind: 'present', version: info.version }, exec)
  return value
}

function tooLarge(size: number | undefined, maxFileBytes: number, path: string): void {
  if (size !== undefined && size > maxFileBytes) {
    throw new FsError(`cannot read "${path}": ${size} bytes exceeds maxFileBytes (${maxFileBytes}) for images and notebooks, which are read whole — read a smaller file, or raise maxFileBytes in tool-read's config`, 'FS_TOO_LARGE')
  }
}

async function readNotebook(
  ctx: Context,
  exec: ToolRunContext,
  target: Parameters<Context['fs']['readBytes']>[0],
  offset: number,
  limit: number,
  config: Config,
): Promise<NotebookValue> {
  const bytes = await ctx.fs.readBytes(target, exec.signal, config.maxFileBytes)
  let notebook
  try {
    notebook = parseNotebook(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch (error) {
    const reason = error instanceof MalformedNotebook ? error.message : 'it is not UTF-8 text'
    throw new FsError(`cannot read "${target.displayPath}": malformed notebook: ${reason}`, 'FS_NOT_TEXT')
  }
  const window = windowCells(notebook.cells, offset, limit, config.maxBytes)
  return {
    kind: 'notebook',
    path: target.displayPath,
    language: notebook.language,
    startCell: offset,
    totalCells: notebook.cells.length,
    cells: window.cells,
    byteCapped: window.byteCapped,
  }
}
