// One listing: the path placed and checked, a source chosen (node:fs fast path or ctx.fs), the walk run.
import type { Context } from '@deepseek-ai/cordis'
import { lstat } from 'node:fs/promises'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import {
  echo, errnoOf, errnoReason, fsPath, hasRawBytes, osError, type OutsideGate, placeArgument, readsAreLocal, shownPath, toolNamed,
} from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from './args.ts'
import { argumentError, checkAborted } from './errors.ts'
import type { Entry, Listing } from './types.ts'
import type { ListingCache } from './walk/listing-cache.ts'
import { ChangedError, LocalSource } from './walk/local-source.ts'
import { ProviderSource } from './walk/provider-source.ts'
import { findRepo, type Repo } from './walk/repo.ts'
import type { Dir, DirSource } from './walk/source.ts'
import { Walk } from './walk/walk.ts'

/** The listed directory: its display path, the provider's target and its process path (each source reads it as its own). */
export interface Root extends Dir {
  readonly target: FsTarget
  readonly local: string
}

/**
 * The fast path wherever the provider's reads are the local provider's own: node:fs then sees what ctx.fs would; with
 * the host's `cache` of what earlier walks counted.
 */
export function chooseSource(ctx: Context, root: Dir & { readonly target?: FsTarget }, cache?: ListingCache): DirSource {
  return root.target !== undefined && readsAreLocal(ctx.fs) ? new LocalSource(cache) : new ProviderSource(ctx)
}

export async function listDirectory(
  ctx: Context,
  exec: Pick<ToolExecution, 'agent' | 'signal' | 'token'>,
  request: ListRequest,
  gate: OutsideGate | undefined,
  sourceFor: (root: Root) => DirSource = (root) => chooseSource(ctx, root),
): Promise<Listing> {
  const named = `path ${echo(request.path)}`
  let target, info
  try {
    ;({ target, info } = await locate(ctx, exec, request.path, gate))
  } catch (error) {
    checkAborted(exec.signal)
    throw osError(error, `${named} cannot be listed`, ROOT)
  }
  const where = shownPath(target.displayPath)
  if (info === undefined) {
    throw new FsError(`${named} does not exist (${where}) — list its parent directory to see what is there`, 'FS_NOT_FOUND')
  }
  if (info.type !== 'directory') {
    const message = info.type === 'file'
      ? `${named} is a file, not a directory (${where}) — use ${toolNamed(ctx, exec, 'read', 'read_file')} to read it`
      : `${named} is not a directory (${where}) — list its parent directory to see what it is`
    throw new FsError(message, 'FS_NOT_DIRECTORY')
  }
  const root: Root = { display: target.displayPath, target, local: ctx.fs.processPath(target) }
  const source = sourceFor(root)
  if (request.sort === 'modified' && !source.metadata) {
    throw argumentError('sort "modified" needs modification times, which this filesystem provider does not report — use sort "name" or "size"')
  }
  let result, repo
  try {
    repo = request.skim ? await findRepo(source, root, exec.signal, ctx.fs) : undefined
    result = await new Walk(source, request, repo, exec.signal).run(root)
  } catch (error) {
    checkAborted(exec.signal)
    if (error instanceof ChangedError) throw new FsError(`${named} changed while it was being listed — list it again`, 'FS_STALE_VERSION', { cause: error })
    const errno = errnoOf(error)
    const next = errno === undefined ? undefined : ROOT_NEXT.get(errno)
    if (errno === undefined || next === undefined) throw error
    const { reason, code } = errnoReason(errno, ROOT)
    throw new FsError(`cannot list "${where}": ${reason} — ${next}`, code, { cause: error })
  }
  // A component swapped for a symlink while we listed would have redirected a walk by paths (one through checked handles
  // cannot be: each directory is opened from its parent's handle, never through a link).
  if (source.pinned !== true) {
    const after = await ctx.fs.resolve(target.displayPath, { signal: exec.signal })
    if (after.targetKey !== target.targetKey) {
      throw new FsError(`${named} changed while it was being listed — list it again`, 'FS_STALE_VERSION')
    }
  }
  return valueOf(request, target.displayPath, result, repo, source.metadata)
}

/** The canonical value of a walk's result: the window's entries, the totals, and what was left out and why. */
function valueOf(request: ListRequest, path: string, result: Walk<Dir>['result'], repo: Repo | undefined, metadata: boolean): Listing {
  const { offset, long } = request
  if (offset > 0 && offset >= result.total) {
    throw argumentError(`offset ${offset} is past the end: ${shownPath(path)} lists ${result.partial ? 'at least ' : ''}${result.total} `
      + `items with these arguments — use an offset below ${result.total}, or leave offset out`)
  }
  const entries = result.shown.map(({ child, rel, siblingsCut }): Entry => {
    const { mode } = child
    const entry: Entry = { name: child.name, type: child.type }
    if (child.size !== undefined) entry.size = child.size
    if (request.recursive) entry.path = rel
    if (long && child.mtimeMs !== undefined) entry.modified = new Date(child.mtimeMs).toISOString()
    if (long && mode !== undefined) entry.permissions = 'rwxrwxrwx'.replace(/./g, (bit, at) => mode & (0o400 >> at) ? bit : '-')
    if (child.target !== undefined) entry.target = child.target
    if (child.error !== undefined) entry.error = child.error
    if (siblingsCut === true) entry.siblings_cut = true
    if (child.collapsed !== undefined) entry.collapsed = child.collapsed
    if (child.children !== undefined) entry.children = child.children
    return entry
  })
  const { file: files, directory: directories, symlink: symlinks, other: others } = result.counts
  const value: Listing = { path, entries, stats: { total: result.total, files, directories, others } }
  if (request.links === 'keep') value.stats.symlinks = symlinks
  const remaining = result.total - offset - entries.length
  if (remaining > 0) {
    value.truncated = { shown: entries.length, total: result.total, remaining }
    if (request.extended) value.truncated.next_offset = offset + entries.length
  }
  if (offset > 0) value.offset = offset
  if (result.ignored > 0) value.ignored = result.ignored
  if (result.gitignored > 0) value.gitignored = result.gitignored
  // Without git's index the rules may have hidden tracked files too: say so where they hid any.
  if (repo?.tracked === 'unknown' && result.gitignored > 0) value.tracked_unknown = true
  const refused = repo?.rules.refusedFiles() ?? []
  if (refused.length > 0) value.gitignore_refused = refused
  if (result.filtered > 0) value.filtered = result.filtered
  if (result.partial) value.partial = true
  if (long && !metadata) value.metadata_unavailable = true
  return value
}

/**
 * The path argument's target and what is there, by common's rule (as written, else unescaped as listings show names,
 * else by raw bytes); a name with bytes that are not UTF-8 is looked up locally, by its bytes.
 */
async function locate(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal' | 'token'>, path: string, gate: OutsideGate | undefined) {
  const { placement } = await placeArgument(ctx, exec, path, readsAreLocal(ctx.fs), gate?.logDir)
  gate?.verify(exec, path, placement)
  const { target } = placement
  if (!hasRawBytes(target.displayPath)) return { target, info: await ctx.fs.stat(target, exec.signal) }
  const info = readsAreLocal(ctx.fs) ? await lstat(fsPath(ctx.fs.processPath(target))).catch(() => undefined) : undefined
  return { target, info: info === undefined ? undefined : { type: info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other' } }
}

/** How the listing's root names itself in common's errno messages. */
const ROOT = { path: 'it', during: 'during the listing' }

/** What to do next when the root fails mid-listing, per OS error (others are thrown as they are). */
const ROOT_NEXT = new Map<string, string>([
  ['EACCES', 'list a directory you can read'],
  ['EPERM', 'list a directory you can read'],
  ['ENOENT', 'list its parent to see what is there now'],
  ['ENOTDIR', 'list its parent to see what it is'],
])
