import { constants, lstatSync, readlinkSync, statSync, type Dirent, type Stats } from 'node:fs'
import { lstat, readdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { checkAborted } from './errors.ts'
import { MAX_SMALL_FILE } from './gitignore.ts'
import type { Child, Dir, DirSource, LinkMode } from './types.ts'

/** Sync stats in slices, yielding between them: a promise per stat cost about 7x `ls -l` on 100k entries, slices 1x. */
const SLICE = 256

/** The fast path: one readdir with file types per directory, a stat only for entries shown or sorted by size / time. */
export class LocalSource implements DirSource {
  readonly kind = 'local'
  readonly metadata = true

  async children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    const dirents = await checked(dir, readdir(dir.local as string, { withFileTypes: true }), signal)
    const children = dirents.map((dirent): Child => ({ name: dirent.name, type: typeOf(dirent) }))
    // `follow` (the seed's plain mode) reports what a link points at; only links pay for a stat.
    // A link that dangles, loops (ELOOP) or passes through a file or an unreadable directory is other.
    await inSlices(links === 'follow' ? children.filter((child) => child.type === 'symlink') : [], signal, (child) => {
      const info = statOf(join(dir.local as string, child.name), true)
      child.type = info === undefined ? 'other' : typeOf(info)
    })
    return children
  }

  async count(dir: Dir, signal: AbortSignal): Promise<number> {
    return (await checked(dir, readdir(dir.local as string), signal)).length
  }

  async readSmall(dir: Dir, name: string): Promise<string | undefined> {
    // One open, no stat first: never through a symlink (as git), never blocking on a FIFO.
    const flag = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
    const bytes = await readFile(join(dir.local as string, name), { flag }).catch(() => undefined)
    return bytes !== undefined && bytes.length <= MAX_SMALL_FILE ? bytes.toString('utf8') : undefined
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
      const info = statOf(path, links === 'follow' && child.type !== 'symlink')
      if (info === undefined) return // vanished between readdir and stat: shown without details
      if (child.type === 'file') child.size = info.size
      if (!meta) return
      child.mtimeMs = info.mtimeMs
      child.mode = info.mode
      if (child.type !== 'symlink') return
      try {
        child.target = readlinkSync(path)
      } catch {
        // replaced between readdir and readlink: shown without a target
      }
    })
  }
}

/** A directory reached by descending must still be one, not a link swapped in since its parent was read (lstat beside the read). */
async function checked<T>(dir: Dir, read: Promise<T>, signal: AbortSignal): Promise<T> {
  const [info, result] = await Promise.all([dir.nested === true ? lstat(dir.local as string) : undefined, read])
  if (info?.isDirectory() === false) throw new Error('changed during listing') // the entry's error text
  checkAborted(signal)
  return result
}

/** A stat (`follow`) or lstat; undefined for whatever fails it (gone, a loop, permission denied). */
function statOf(path: string, follow: boolean): Stats | undefined {
  try {
    return (follow ? statSync : lstatSync)(path, { throwIfNoEntry: false })
  } catch {
    return undefined
  }
}

async function inSlices<T>(items: T[], signal: AbortSignal, each: (item: T) => void): Promise<void> {
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await yieldToLoop()
    checkAborted(signal)
    for (const item of items.slice(start, start + SLICE)) each(item)
  }
}

const typeOf = (info: Dirent | Stats): Child['type'] =>
  info.isFile() ? 'file' : info.isDirectory() ? 'directory' : info.isSymbolicLink() ? 'symlink' : 'other'
