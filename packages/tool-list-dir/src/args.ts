import { argumentError } from './errors.ts'
import { quoted } from './quote.ts'
import { ignoreMatcher } from './ignore.ts'
import { patternMatcher } from './pattern.ts'
import type { SortKey } from './sort.ts'

const DEFAULT_DEPTH = 3
export const MAX_DEPTH = 10
/** PATH_MAX on Linux. */
const MAX_PATH_LENGTH = 4096

/** The arguments as the model sends them (types already checked by the tool pipeline). */
export interface ListArgs {
  path: string
  ignore?: string[]
  recursive?: boolean
  depth?: number
  pattern?: string
  sort?: SortKey
  reverse?: boolean
  directories_only?: boolean
  files_only?: boolean
  long?: boolean
  limit?: number
  offset?: number
  all?: boolean
}

export interface ListRequest extends CallMode {
  path: string
  ignore: (name: string) => boolean
  depth: number
  pattern: ((relativePath: string) => boolean) | undefined
  sort: SortKey
  reverse: boolean
  only: 'files' | 'directories' | undefined
  cap: number
  /** Recursive mode: .gitignore and the heavy set are off. */
  all: boolean
}

/** How a call renders, from its arguments alone (pure: no validation, nothing compiled). */
export interface CallMode {
  recursive: boolean
  long: boolean
  /** An extension changes the result: a cut result then says how to see the rest. Defaults sent explicitly do not count. */
  extended: boolean
  /** The filters in effect, named for messages. */
  filters: string[]
  /** Listed entries skipped before the first shown one. */
  offset: number
}

export function callMode(args: ListArgs, maxEntries: number): CallMode {
  const recursive = args.recursive === true || (args.recursive !== false && args.depth !== undefined)
  const only = args.files_only === true ? 'files' : args.directories_only === true ? 'directories' : undefined
  const filters: string[] = []
  if (args.pattern !== undefined) filters.push(`pattern ${quoted(args.pattern)}`)
  if (only !== undefined) filters.push(`${only}_only`)
  const extended = recursive || args.long === true || args.reverse === true || only !== undefined
    || args.pattern !== undefined || (args.sort ?? 'type') !== 'type'
    || (args.limit !== undefined && args.limit !== maxEntries) || (args.offset ?? 0) !== 0
  return { recursive, long: args.long === true, extended, filters, offset: args.offset ?? 0 }
}

/** Check what the schema cannot express; every error names the argument and what would work. */
export function parseArgs(args: ListArgs, maxEntries: number): ListRequest {
  if (args.path.trim() === '') throw argumentError('path must name a directory — use "." for the workspace root')
  if (args.path.includes('\0')) throw argumentError('path must not contain a NUL character')
  if (args.path.length > MAX_PATH_LENGTH) {
    throw argumentError(`path is ${args.path.length} characters; paths have at most ${MAX_PATH_LENGTH} — pass a shorter or relative path`)
  }
  if (args.recursive === false && args.depth !== undefined) {
    throw argumentError(`depth ${args.depth} needs recursive=true — drop depth, or set recursive=true`)
  }
  const mode = callMode(args, maxEntries)
  const depth = args.depth ?? DEFAULT_DEPTH
  if (!Number.isInteger(depth) || depth < 1 || depth > MAX_DEPTH) {
    throw argumentError(`depth must be an integer from 1 to ${MAX_DEPTH} (levels below path; 1 = direct children), got ${args.depth}`)
  }
  if (args.files_only === true && args.directories_only === true) {
    throw argumentError('files_only and directories_only cannot both be true — set one of them')
  }
  if (args.limit !== undefined && (!Number.isInteger(args.limit) || args.limit < 1)) {
    throw argumentError(`limit must be a positive integer, got ${args.limit}`)
  }
  if (args.limit !== undefined && args.limit > maxEntries) {
    throw argumentError(`limit ${args.limit} is above the maximum of ${maxEntries} entries per call — use limit ≤ ${maxEntries}, or narrow with pattern`)
  }
  if (args.offset !== undefined && (!Number.isInteger(args.offset) || args.offset < 0)) {
    throw argumentError(`offset must be a non-negative integer (entries to skip), got ${args.offset}`)
  }
  if (args.pattern !== undefined && args.pattern.trim() === '') {
    throw argumentError('pattern must be a non-empty glob such as "*.ts" — or leave it out')
  }
  return {
    ...mode,
    path: args.path,
    ignore: ignoreMatcher(args.ignore ?? []),
    depth: mode.recursive ? depth : 1,
    pattern: args.pattern === undefined ? undefined : patternMatcher(args.pattern),
    sort: args.sort ?? 'type',
    reverse: args.reverse === true,
    only: args.files_only === true ? 'files' : args.directories_only === true ? 'directories' : undefined,
    cap: args.limit ?? maxEntries,
    all: args.all === true,
  }
}
