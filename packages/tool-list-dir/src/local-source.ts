import { lstat, readdir, readlink, stat } from 'node:fs/promises'
import type { Dirent, Stats } from 'node:fs'
import { join } from 'node:path'
import type { Child, Dir, DirSource, EntryType, LinkMode } from './types.ts'

/**
 * The fast path for the local, non-confining provider: one readdir with file types per
 * directory, and a stat only for the entries that are shown (or needed to sort). The host's
 * ctx.fs.listDir awaits a realpath and a stat per child, one at a time.
 */
export class LocalSource implements DirSource {
  readonly kind = 'local'

  async children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    const dirents = await readdir(dir.local as string, { withFileTypes: true })
    signal.throwIfAborted()
    const children = dirents.map((dirent): Child => ({ name: dirent.name, type: direntType(dirent) }))
    if (links === 'follow') {
      // The seed's plain mode reports what a link points at; only links pay for a stat.
      await Promise.all(children.map(async (child) => {
        if (child.type !== 'symlink') return
        child.type = await stat(join(dir.local as string, child.name)).then(statType, () => 'other' as const)
      }))
    }
    return children
  }

  child(dir: Dir, name: string): Dir {
    return { display: join(dir.display, name), local: join(dir.local as string, name) }
  }

  async details(dir: Dir, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Promise<void> {
    await Promise.all(children.map(async (child) => {
      if (!meta && child.type !== 'file') return
      if (meta ? child.mtimeMs !== undefined : child.size !== undefined) return // already fetched to sort
      const path = join(dir.local as string, child.name)
      const info = await (links === 'keep' || child.type === 'symlink' ? lstat(path) : stat(path)).catch(() => undefined)
      if (info === undefined) return // vanished between readdir and stat: shown without details
      if (child.type === 'file') child.size = info.size
      if (meta) {
        child.mtimeMs = info.mtimeMs
        child.mode = info.mode
        if (child.type === 'symlink') child.target = await readlink(path).catch(() => undefined) ?? ''
      }
    }))
    signal.throwIfAborted()
  }
}

function direntType(dirent: Dirent): EntryType {
  if (dirent.isFile()) return 'file'
  if (dirent.isDirectory()) return 'directory'
  if (dirent.isSymbolicLink()) return 'symlink'
  return 'other'
}

function statType(info: Stats): EntryType {
  if (info.isFile()) return 'file'
  if (info.isDirectory()) return 'directory'
  return 'other'
}
