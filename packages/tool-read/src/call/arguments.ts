/** The call's arguments checked, with the defaults the schema cannot express: what every reader takes. */

import { HarnessError } from '@deepseek-ai/dsh-llm'
import { quoted } from '@gencode-ai/dsh-tool-common'
import type { Config } from '../config.ts'
import { checkEncoding } from '../formats/text/encoding.ts'
import type { ReadRequest } from '../reader.ts'

export interface ReadArgs {
  file_path: string
  offset?: number
  limit?: number
  encoding?: string
  pages?: string
}

function positive(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isInteger(value) || value < 1) {
    throw new HarnessError(`${name} must be a positive integer (got ${value}); lines and cells are numbered from 1`, 'INVALID_ARGS')
  }
  return value
}

export function checkArgs(args: ReadArgs, config: Config): ReadRequest['options'] {
  const path = args.file_path
  if (path.trim() === '') throw new HarnessError('file_path must not be empty; pass the path of a file', 'INVALID_ARGS')
  // Node refuses NUL in a path with a message that names no argument.
  if (path.includes('\0')) throw new HarnessError(`file_path must not contain a NUL character (got ${quoted(path)}); pass the path of a file`, 'INVALID_ARGS')
  checkEncoding(args.encoding)
  return {
    offset: positive(args.offset, 'offset', 1),
    // A limit above the cap is served up to the cap; the footer says how to continue.
    limit: Math.min(positive(args.limit, 'limit', config.maxEntries), config.maxEntries),
    encoding: args.encoding,
    pages: args.pages,
  }
}
