/** The target: its node:fs path on the local fast path, one stat, and absence, directories and special files as clear errors. */

import { readdir, realpath } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { distance } from 'fastest-levenshtein'
import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsInfo, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import { compareNames, echo, escapeName, fsPath, nameFromBytes, readsAreLocal } from '@gencode-ai/dsh-tool-common'

/** The node:fs path of `target` when the provider's reads are the local provider's own, else undefined. */
export function localPath(ctx: Context, target: FsTarget): string | undefined {
  return readsAreLocal(ctx.fs) ? ctx.fs.processPath(target) : undefined
}

/** A directory or a special file, where a regular file was wanted. */
export function notRegular(target: FsTarget, type: 'directory' | 'other', listTool: string): FsError {
  return type === 'directory'
    ? new FsError(`cannot read ${echo(target.displayPath)}: it is a directory — use ${listTool} to see what is in it`, 'FS_NOT_REGULAR_FILE')
    : new FsError(`cannot read ${echo(target.displayPath)}: not a regular file (a device, socket or pipe)`, 'FS_NOT_REGULAR_FILE')
}

/** The target's stat, or a clear error; `fastPath: false` forces the provider path (the differential test compares both). */
export async function statRegular(
  ctx: Context, exec: ToolExecution, target: FsTarget, listTool: string, options: { fastPath?: boolean } = {},
): Promise<FsInfo> {
  const info = await ctx.fs.stat(target, exec.signal)
  if (info === undefined) {
    ctx.emit('fs/observed', target, { kind: 'absent' }, exec)
    throw await notFound(ctx, exec, target, listTool, options)
  }
  if (info.type !== 'file') throw notRegular(target, info.type === 'directory' ? 'directory' : 'other', listTool)
  return info
}

async function notFound(
  ctx: Context, exec: ToolExecution, target: FsTarget, listTool: string, options: { fastPath?: boolean },
): Promise<FsError> {
  const parentPath = dirname(target.displayPath)
  const head = `cannot read ${echo(target.displayPath)}: file not found`
  let names: { name: string, link: boolean }[]
  try {
    const parent = await ctx.fs.resolve(parentPath, { signal: exec.signal })
    const info = await ctx.fs.stat(parent, exec.signal)
    if (info?.type !== 'directory') return new FsError(`${head} (the directory ${echo(parentPath)} does not exist)`, 'FS_NOT_FOUND')
    const local = options.fastPath === false ? undefined : localPath(ctx, parent)
    // The provider lists what it resolves: a listed name that stat found absent is taken for a dangling link.
    names = local === undefined
      ? (await ctx.fs.listDir(parent, exec.signal)).map((entry) => ({ name: entry.name, link: true }))
      : await localNames(local)
  } catch (error) {
    if (error instanceof FsError && error.code === 'FS_ABORTED') throw error
    return new FsError(head, 'FS_NOT_FOUND')
  }
  const wanted = basename(target.displayPath)
  if (names.some((entry) => entry.link && entry.name === wanted)) {
    // The name is there but leads nowhere: a dangling symlink (suggesting the name itself would send the model in a loop).
    return new FsError(`${head} (${escapeName(wanted)} is a symbolic link whose target does not exist)`, 'FS_NOT_FOUND')
  }
  // Shown as the model sees names (escaped), so a suggestion passed back reads the file.
  const near = suggest(wanted, names.map((entry) => entry.name)).map(escapeName)
  return near.length > 0
    ? new FsError(`${head}. Did you mean: ${near.join(', ')}?`, 'FS_NOT_FOUND')
    : new FsError(`${head} — use ${listTool} to see what is in ${echo(parentPath)}`, 'FS_NOT_FOUND')
}

/**
 * listDir's names by one readdir of raw names (a byte that is not UTF-8 kept as a surrogate), without its realpath and
 * stat per child; only symlinks, which can fail it, are resolved.
 */
async function localNames(dir: string): Promise<{ name: string, link: boolean }[]> {
  const entries = await readdir(fsPath(dir), { withFileTypes: true, encoding: 'buffer' })
  const names: { name: string, link: boolean }[] = []
  for (const entry of entries) {
    const name = nameFromBytes(entry.name)
    let link = false
    if (entry.isSymbolicLink()) {
      try {
        await realpath(fsPath(join(dir, name)))
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ENOENT') throw error
        link = true
      }
    }
    names.push({ name, link })
  }
  return names
}

/** Up to three names close to `wanted`: small edit distance, same stem, or a case difference. */
function suggest(wanted: string, names: readonly string[]): string[] {
  const want = wanted.toLowerCase()
  const stem = want.replace(/\.[^.]*$/, '')
  const budget = Math.max(2, Math.floor(want.length / 3))
  const scored: { name: string, score: number }[] = []
  for (const name of names) {
    const lower = name.toLowerCase()
    // The length difference alone rules most names out without the full distance.
    let score = Math.abs(want.length - lower.length) > budget ? budget + 1 : distance(want, lower)
    if (stem !== '' && lower.replace(/\.[^.]*$/, '') === stem) score = Math.min(score, 1)
    if (score <= budget) scored.push({ name, score })
  }
  // A total order (the locale's ties distinct names, e.g. NFC and NFD), so the listing order never matters.
  scored.sort((a, b) => a.score - b.score || compareNames(a.name, b.name))
  return scored.slice(0, 3).map((entry) => entry.name)
}
