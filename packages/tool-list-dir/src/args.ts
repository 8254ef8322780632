// list_directory's arguments: the schema the model sees, and their parse into one listing request.
import type { InferArgs } from '@deepseek-ai/dsh-tools'
import { echo } from '@gencode-ai/dsh-tool-common'
import { argumentError } from './errors.ts'
import { compileGlob, GlobSyntaxError, wildcardMatcher } from './filters/glob.ts'

const DEFAULT_DEPTH = 3
const MAX_DEPTH = 10
const MAX_PATH_LENGTH = 4096 // PATH_MAX on Linux
/** Longest glob accepted in `pattern` or `ignore`: far past any real one, short of regex limits. */
const MAX_GLOB_LENGTH = 1024
/** Most `ignore` globs, and their characters in all: each name is tested against every glob, so their sum bounds the work. */
const MAX_IGNORE_GLOBS = 100
const MAX_IGNORE_CHARS = 4096

export const parameters = (maxEntries: number) => ({
  path: { type: 'string', required: true },
  ignore: { type: 'array', items: { type: 'string' }, description: 'Basename globs to hide (* and ? only).' },
  recursive: { type: 'boolean', description: 'Tree view.' },
  depth: { type: 'integer', description: `Tree levels, 1-${MAX_DEPTH}, default ${DEFAULT_DEPTH}.` },
  pattern: { type: 'string', description: 'Glob on relative paths; no / matches basenames.' },
  sort: { type: 'string', enum: ['name', 'size', 'modified', 'type'] },
  reverse: { type: 'boolean' },
  directories_only: { type: 'boolean' },
  files_only: { type: 'boolean' },
  long: { type: 'boolean', description: 'Add mtime, permissions.' },
  limit: { type: 'integer', description: `Max ${maxEntries}.` },
  offset: { type: 'integer' },
  all: { type: 'boolean', description: 'Tree: expand gitignored, node_modules etc.' },
}) as const

export type ListArgs = InferArgs<ReturnType<typeof parameters>>

/** How a call renders, from its arguments alone (pure: no validation, nothing compiled). */
export function callMode(args: ListArgs, maxEntries: number) {
  const recursive = args.recursive === true || (args.recursive !== false && args.depth !== undefined)
  const only = args.files_only === true ? 'files_only' : args.directories_only === true ? 'directories_only' : undefined
  const filters = [args.pattern === undefined ? undefined : `pattern ${echo(args.pattern)}`, only].filter((name) => name !== undefined)
  // An extension changes the result (a cut result then says how to see the rest); defaults sent explicitly do not count.
  const extended = recursive || args.long === true || args.reverse === true || only !== undefined
    || args.pattern !== undefined || (args.sort ?? 'type') !== 'type'
    || (args.limit !== undefined && args.limit !== maxEntries) || (args.offset ?? 0) !== 0
  return { recursive, long: args.long === true, extended, filters, offset: args.offset ?? 0 }
}

/** Check what the schema cannot express (it already makes numbers integers); every error names the argument and what would work. */
export function parseArgs(args: ListArgs, maxEntries: number) {
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
  if (depth < 1 || depth > MAX_DEPTH) {
    throw argumentError(`depth must be an integer from 1 to ${MAX_DEPTH} (levels below path; 1 = direct children), got ${args.depth}`)
  }
  if (args.files_only === true && args.directories_only === true) {
    throw argumentError('files_only and directories_only cannot both be true — set one of them')
  }
  if ((args.limit ?? 1) < 1) throw argumentError(`limit must be a positive integer, got ${args.limit}`)
  if (args.limit !== undefined && args.limit > maxEntries) {
    throw argumentError(`limit ${args.limit} is above the maximum of ${maxEntries} entries per call — use limit ≤ ${maxEntries}, or narrow with pattern`)
  }
  if ((args.offset ?? 0) < 0) throw argumentError(`offset must be a non-negative integer (entries to skip), got ${args.offset}`)
  if (args.pattern?.trim() === '') throw argumentError('pattern must be a non-empty glob such as "*.ts" — or leave it out')
  return {
    ...mode,
    path: args.path,
    ignore: ignoreMatcher(args.ignore ?? []),
    ignoreGlobs: args.ignore ?? [],
    depth: mode.recursive ? depth : 1,
    pattern: args.pattern === undefined ? undefined : patternMatcher(args.pattern),
    sort: args.sort ?? 'type',
    reverse: args.reverse === true,
    only: args.files_only === true ? 'file' : args.directories_only === true ? 'directory' : undefined,
    cap: args.limit ?? maxEntries,
    links: mode.recursive || mode.long ? 'keep' : 'follow', // keep: symlinks are entries, with times, permissions and link text
    skim: mode.recursive && args.all !== true, // .gitignore and the heavy set collapse directories
  } as const
}

export type ListRequest = ReturnType<typeof parseArgs>

/** `ignore`: basename globs where only `*` and `?` are wildcards (qwen-code's meaning; `[`, `{`, `!` are literal). */
function ignoreMatcher(patterns: readonly string[]): ((name: string) => boolean) | undefined {
  if (patterns.length === 0) return undefined
  for (const [index, pattern] of patterns.entries()) {
    if (pattern.length > MAX_GLOB_LENGTH) {
      throw argumentError(`ignore[${index}] is ${pattern.length} characters; a basename glob has at most ${MAX_GLOB_LENGTH} — shorten it, e.g. "*.log"`)
    }
  }
  const total = patterns.reduce((sum, pattern) => sum + pattern.length, 0)
  if (patterns.length > MAX_IGNORE_GLOBS || total > MAX_IGNORE_CHARS) {
    throw argumentError(`ignore has ${patterns.length} globs of ${total} characters in all; at most ${MAX_IGNORE_GLOBS} globs of ${MAX_IGNORE_CHARS} characters `
      + 'are matched — merge them (e.g. "*.log" for many names), or narrow path or pattern')
  }
  const globs = patterns.map((pattern) => wildcardMatcher(Array.from(pattern)))
  // Names are compared by code point, as `?` matches one character; most names are ASCII and need no split.
  return (name) => {
    const chars = /[\ud800-\udfff]/.test(name) ? Array.from(name) : name
    return globs.some((matches) => matches(chars))
  }
}

/** `pattern`: a picomatch glob on the relative path; one without `/` matches basenames at any depth, hidden ones too. */
function patternMatcher(pattern: string): (relativePath: string) => boolean {
  if (pattern.length > MAX_GLOB_LENGTH) {
    throw argumentError(`pattern is ${pattern.length} characters; a glob has at most ${MAX_GLOB_LENGTH} — try e.g. "*.ts"`)
  }
  let matches: (path: string) => boolean
  try {
    matches = compileGlob(pattern)
  } catch (error) {
    if (!(error instanceof GlobSyntaxError)) throw error
    throw argumentError(`pattern ${echo(pattern)} is not a valid glob (${error.message}) — try e.g. "*.ts" or "src/**/*.json"`, { cause: error })
  }
  const matchBase = !pattern.includes('/')
  return (relativePath) => matches(matchBase ? relativePath.slice(relativePath.lastIndexOf('/') + 1) : relativePath)
}
