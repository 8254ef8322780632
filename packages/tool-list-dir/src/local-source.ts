import { constants, lstatSync, readlinkSync, statSync, type Dirent, type Stats } from 'node:fs'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { checkAborted } from './errors.ts'
import { MAX_SMALL_FILE } from './gitignore.ts'
import type { Child, Dir, DirSource, EntryType, LinkMode } from './types.ts'

/**
 * Stats run synchronously in slices, yielding to the event loop between them: on a 100k-entry
 * directory one promise per stat costs about 7x `ls -l`, slices of sync stats about 1x.
 */
const SLICE = 256

/**
 * The fast path for the local, non-confining provider: one readdir with file types per
 * directory, and a stat only for the entries that are shown (or needed to sort). The host's
 * ctx.fs.listDir awaits a realpath and a stat per child, one at a time.
 */
export class LocalSource implements DirSource {
  readonly kind = 'local'
  readonly metadata = true

  async children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    const dirents = await checked(dir, readdir(dir.local as string, { withFileTypes: true }))
    checkAborted(signal)
    const children = dirents.map((dirent): Child => ({ name: dirent.name, type: direntType(dirent) }))
    if (links === 'follow') {
      // The seed's plain mode reports what a link points at; only links pay for a stat.
      await inSlices(children.filter((child) => child.type === 'symlink'), signal, (child) => {
        const info = statSync(join(dir.local as string, child.name), { throwIfNoEntry: false })
        child.type = info === undefined ? 'other' : statType(info)
      })
    }
    return children
  }

  async count(dir: Dir, signal: AbortSignal): Promise<number> {
    const names = await checked(dir, readdir(dir.local as string))
    checkAborted(signal)
    return names.length
  }

  async readSmall(dir: Dir, name: string): Promise<string | undefined> {
    const path = join(dir.local as string, name)
    try {
      // One open, no stat first: never through a symlink (as git), never blocking on a FIFO.
      const bytes = await readFile(path, { flag: constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK })
      return bytes.length <= MAX_SMALL_FILE ? bytes.toString('utf8') : undefined
    } catch {
      return undefined
    }
  }

  async exists(dir: Dir, name: string): Promise<boolean> {
    return await lstat(join(dir.local as string, name)).then(() => true, () => false)
  }

  parent(dir: Dir): Dir | undefined {
    const up = dirname(dir.local as string)
    return up === dir.local ? undefined : { display: up, local: up }
  }

  child(dir: Dir, name: string): Dir {
    return { display: join(dir.display, name), local: join(dir.local as string, name), nested: true }
  }

  async details(dir: Dir, children: Child[], links: LinkMode, meta: boolean, signal: AbortSignal): Promise<void> {
    await inSlices(children, signal, (child) => {
      if (!meta && child.type !== 'file') return
      if (meta ? child.mtimeMs !== undefined : child.size !== undefined) return // already fetched to sort
      const path = join(dir.local as string, child.name)
      const follow = links === 'follow' && child.type !== 'symlink'
      let info: Stats | undefined
      try {
        info = follow ? statSync(path, { throwIfNoEntry: false }) : lstatSync(path, { throwIfNoEntry: false })
      } catch {
        info = undefined
      }
      if (info === undefined) return // vanished between readdir and stat: shown without details
      if (child.type === 'file') child.size = info.size
      if (!meta) return
      child.mtimeMs = info.mtimeMs
      child.mode = info.mode
      if (child.type === 'symlink') {
        try {
          child.target = readlinkSync(path)
        } catch {
          // replaced between readdir and readlink: shown without a target
        }
      }
    })
  }
}

/**
 * A subdirectory swapped for a symlink after its parent was read would lead the walk elsewhere:
 * a directory reached by descending must still be a directory, not a link, when it is read. The
 * lstat runs beside the read (no extra round trip; an awaited realpath per directory cost as much
 * as the readdir itself).
 */
async function checked<T>(dir: Dir, read: Promise<T>): Promise<T> {
  const [info, result] = await Promise.all([dir.nested === true ? lstat(dir.local as string) : undefined, read])
  if (info !== undefined && !info.isDirectory()) {
    throw Object.assign(new Error(`${dir.display} changed during listing`), { code: 'CHANGED' })
  }
  return result
}

async function inSlices<T>(items: T[], signal: AbortSignal, each: (item: T) => void): Promise<void> {
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await yieldToLoop()
    checkAborted(signal)
    for (const item of items.slice(start, start + SLICE)) each(item)
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
