import type { Context } from '@deepseek-ai/cordis'
import { FsError } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { ListRequest } from './args.ts'
import { LocalSource } from './local-source.ts'
import { readsAreLocal } from './local-reads.ts'
import { argumentError, checkAborted } from './errors.ts'
import { quoted } from './quote.ts'
import { findRepo } from './gitignore.ts'
import { permissionString } from './permissions.ts'
import { ProviderSource } from './provider-source.ts'
import type { Dir, DirSource, Entry, Listing } from './types.ts'
import { walk } from './walk.ts'
import { place, type OutsideGate } from './workspace.ts'

/**
 * The local fast path applies wherever the provider's reads are the local provider's own
 * (dsh-fs-local, dsh-fs-sandbox): node:fs then sees exactly what ctx.fs would.
 */
export function chooseSource(ctx: Context, root: Dir): DirSource {
  return root.target !== undefined && readsAreLocal(ctx.fs) ? new LocalSource() : new ProviderSource(ctx)
}

/** Run one listing: resolve, check, walk, and shape the canonical value. */
export async function listDirectory(
  ctx: Context,
  exec: Pick<ToolExecution, 'agent' | 'signal' | 'token'>,
  request: ListRequest,
  gate: OutsideGate | undefined,
  sourceFor: (root: Dir) => DirSource = (root) => chooseSource(ctx, root),
): Promise<Listing> {
  const { target, info } = await locate(ctx, exec, request.path, gate)
  if (info === undefined) {
    throw new FsError(`path ${quoted(request.path)} does not exist (${target.displayPath}) — list its parent directory to see what is there`, 'FS_NOT_FOUND')
  }
  if (info.type !== 'directory') {
    const message = info.type === 'file'
      ? `path ${quoted(request.path)} is a file, not a directory (${target.displayPath}) — use read_file to read it`
      : `path ${quoted(request.path)} is not a directory (${target.displayPath}) — list its parent directory to see what it is`
    throw new FsError(message, 'FS_NOT_DIRECTORY')
  }
  const root: Dir = { display: target.displayPath, target, local: ctx.fs.processPath(target) }
  const source = sourceFor(root)
  if (request.sort === 'modified' && !source.metadata) {
    throw argumentError('sort "modified" needs modification times, which this filesystem provider does not report — use sort "name" or "size"')
  }
  const keep = request.recursive || request.long
  const skim = request.recursive && !request.all
  let result
  try {
    result = await walk(source, root, {
      depth: request.depth,
      links: keep ? 'keep' : 'follow',
      ignore: request.ignore,
      pattern: request.pattern,
      only: request.only,
      sort: request.sort,
      reverse: request.reverse,
      meta: keep,
      cap: request.cap,
      offset: request.offset,
      repo: skim ? await findRepo(source, root, exec.signal) : undefined,
      heavy: skim,
      signal: exec.signal,
    })
  } catch (error) {
    checkAborted(exec.signal)
    throw rootError(error, target.displayPath)
  }
  // A component swapped for a symlink while we listed would have redirected the walk.
  const after = await ctx.fs.resolve(target.displayPath, { signal: exec.signal })
  if (after.targetKey !== target.targetKey) {
    throw new FsError(`path ${quoted(request.path)} changed while it was being listed — list it again`, 'FS_STALE_VERSION')
  }
  const entries = result.shown.map(({ child, rel, siblingsCut }): Entry => {
    const entry: Entry = { name: child.name, type: child.type }
    if (child.size !== undefined) entry.size = child.size
    if (request.recursive) entry.path = rel
    if (request.long && child.mtimeMs !== undefined) entry.modified = new Date(child.mtimeMs).toISOString()
    if (request.long && child.mode !== undefined) entry.permissions = permissionString(child.mode)
    if (child.target !== undefined) entry.target = child.target
    if (child.error !== undefined) entry.error = child.error
    if (siblingsCut === true) entry.siblings_cut = true
    if (child.collapsed !== undefined) entry.collapsed = child.collapsed
    if (child.children !== undefined) entry.children = child.children
    return entry
  })
  if (request.offset > 0 && request.offset >= result.total) {
    throw argumentError(`offset ${request.offset} is past the end: ${target.displayPath} lists ${atLeast(result.partial)}${result.total} `
      + `items with these arguments — use an offset below ${result.total}, or leave offset out`)
  }
  const { files, directories, symlinks, others } = result.counts
  const value: Listing = {
    path: target.displayPath,
    entries,
    stats: { total: result.total, files, directories, others, ...keep ? { symlinks } : {} },
  }
  const remaining = result.total - request.offset - entries.length
  if (remaining > 0) {
    value.truncated = { shown: entries.length, total: result.total, remaining }
    if (request.extended) value.truncated.next_offset = request.offset + entries.length
  }
  if (request.offset > 0) value.offset = request.offset
  if (result.ignored > 0) value.ignored = result.ignored
  if (result.gitignored > 0) value.gitignored = result.gitignored
  if (result.filtered > 0) value.filtered = result.filtered
  if (result.partial) value.partial = true
  if (request.long && !source.metadata) value.metadata_unavailable = true
  return value
}

const atLeast = (partial: boolean): string => partial ? 'at least ' : ''

/** Resolve and stat the listed path; an OS error here names the path argument. */
async function locate(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal' | 'token'>, path: string, gate: OutsideGate | undefined) {
  try {
    const placed = await place(ctx, exec, path)
    gate?.verify(exec, path, placed)
    return { target: placed.target, info: await ctx.fs.stat(placed.target, exec.signal) }
  } catch (error) {
    checkAborted(exec.signal)
    const code = (error as { code?: string }).code
    if (error instanceof FsError || code === undefined) throw error
    const reason = code === 'ENAMETOOLONG' ? 'a name in it is too long' : code === 'ELOOP' ? 'it loops through symlinks' : code
    throw new FsError(`path ${quoted(path)} cannot be listed: ${reason}`, code === 'EACCES' ? 'FS_PERMISSION_DENIED' : 'FS_IO_ERROR', { cause: error })
  }
}

function rootError(error: unknown, display: string): unknown {
  if (error instanceof FsError) return error
  const code = (error as { code?: string }).code
  if (code === 'EACCES' || code === 'EPERM') return new FsError(`cannot list "${display}": permission denied — list a directory you can read`, 'FS_PERMISSION_DENIED', { cause: error })
  if (code === 'ENOENT') return new FsError(`cannot list "${display}": it vanished during the listing — list its parent to see what is there now`, 'FS_NOT_FOUND', { cause: error })
  if (code === 'ENOTDIR') return new FsError(`cannot list "${display}": not a directory — list its parent to see what it is`, 'FS_NOT_DIRECTORY', { cause: error })
  return error
}
