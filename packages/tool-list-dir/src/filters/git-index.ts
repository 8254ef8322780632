/** Which paths git tracks (ignore rules never hide those): the repository's index file, versions 2–4, else `git ls-files`. */

import { execFile } from 'node:child_process'
import { closeSync, constants, fstatSync, lstatSync, openSync, read as readFd, type BigIntStats } from 'node:fs'
import { join, resolve } from 'node:path'
import type { FileSystem } from '@deepseek-ai/dsh-fs'

/** Largest index read: about a million entries, past the index of any monorepo git handles well. */
const MAX_INDEX_BYTES = 128 * 1024 * 1024
/** Largest `git ls-files -z` output taken, and how long it may run. */
const MAX_LS_FILES_BYTES = 128 * 1024 * 1024
const LS_FILES_TIMEOUT_MS = 20_000
/** Largest `.git` file (`gitdir: <path>`) read. */
const MAX_GIT_FILE_BYTES = 64 * 1024
/**
 * What the decoded paths may hold, in characters, the directories they imply included: v4 prefix compression lets a few
 * MB of index repeat a long path into gigabytes, so the output is bounded, not only the input. Past it the index is
 * unreadable and tracked files unknown (git would decode the same gigabytes).
 */
const MAX_TRACKED_CHARS = 64 * 1024 * 1024
/** Longest path an entry may decode to: Linux's PATH_MAX, past which no work tree can hold the file. */
const MAX_PATH_BYTES = 4096
/** Hash lengths an index may carry: SHA-1, SHA-256. */
const HASH_LENGTHS = [20, 32]

export interface Tracked {
  /** Where the paths came from; `unknown`: neither the index nor git could tell, so ignore rules apply to tracked files too. */
  source: 'index' | 'git' | 'unknown'
  /** Whether git tracks `path` (git-relative, no trailing '/'), or for a directory any path under it. */
  holds(path: string, directory: boolean): boolean
}

export const UNKNOWN: Tracked = { source: 'unknown', holds: () => false }

class TrackedPaths implements Tracked {
  private readonly files = new Set<string>()
  /** Every directory holding a tracked path, as `a/` and `a/b/`. */
  private readonly dirs = new Set<string>()
  /** A sparse index's directories outside the cone (`dir/`), each holding everything under it. */
  private readonly sparse = new Set<string>()

  /** Throws Unreadable past MAX_TRACKED_CHARS: deep distinct paths imply many long directories. */
  constructor(readonly source: 'index' | 'git', paths: readonly string[], sparse: readonly string[] = []) {
    let chars = 0
    for (const dir of sparse) this.sparse.add(dir)
    for (const path of [...paths, ...sparse]) {
      if (path.length > MAX_PATH_BYTES) throw new Unreadable(`a path of ${path.length} characters`, false)
      chars += path.length
      this.files.add(path)
      for (let at = path.lastIndexOf('/', path.length - 2); at > 0; at = path.lastIndexOf('/', at - 1)) {
        const dir = path.slice(0, at + 1)
        if (this.dirs.has(dir)) break // its parents are in already
        chars += dir.length
        this.dirs.add(dir)
      }
      if (chars > MAX_TRACKED_CHARS) throw new Unreadable(`paths past ${MAX_TRACKED_CHARS} characters`, false)
    }
  }

  holds(path: string, directory: boolean): boolean {
    // A gitlink (submodule) is a tracked path that is a directory here.
    if (this.files.has(path) || (directory && this.dirs.has(`${path}/`))) return true
    if (this.sparse.size === 0) return false
    // A sparse directory holds everything under it: look its ancestors up, one set lookup each, not every sparse entry.
    const full = directory ? `${path}/` : path
    for (let at = full.indexOf('/'); at !== -1; at = full.indexOf('/', at + 1)) if (this.sparse.has(full.slice(0, at + 1))) return true
    return false
  }
}

/** `askGit`: whether `git ls-files` may read what this reader could not (not past a bound, nor a FIFO it would block on). */
class Unreadable extends Error {
  constructor(message: string, readonly askGit = true, public key?: string) {
    super(message)
  }
}

/** The paths of an index file (a sparse index's directory entries apart, as `dir/`); throws Unreadable on what it cannot read. */
export function parseIndex(bytes: Buffer): { paths: string[], sparse: string[] } {
  let last: Unreadable | undefined
  for (const hashLength of HASH_LENGTHS) {
    try {
      return parseWith(bytes, hashLength)
    } catch (error) {
      if (!(error instanceof Unreadable)) throw error
      // A bound passed under one hash length is the answer: another length only misreads the layout.
      if (last === undefined || last.askGit) last = error
    }
  }
  throw last ?? new Unreadable('no hash length')
}

function parseWith(bytes: Buffer, hashLength: number): { paths: string[], sparse: string[] } {
  if (bytes.length < 12 + hashLength || bytes.toString('latin1', 0, 4) !== 'DIRC') throw new Unreadable('not an index file')
  const version = bytes.readUInt32BE(4)
  if (version < 2 || version > 4) throw new Unreadable(`index version ${version}`)
  const count = bytes.readUInt32BE(8)
  const end = bytes.length - hashLength // the trailing checksum
  // ctime, mtime (8 bytes each), dev, ino, mode, uid, gid, size (4 each), the object id, 16 bits of flags.
  const fixed = 40 + hashLength + 2
  const paths: string[] = []
  const sparse: string[] = []
  // Version 4: the previous path's bytes, which the next one keeps a prefix of.
  let previous = Buffer.alloc(version === 4 ? 4096 : 0)
  let previousLength = 0
  let decoded = 0
  let at = 12
  for (let entry = 0; entry < count; entry++) {
    if (at + fixed > end) throw new Unreadable('entries run past the end')
    const mode = bytes.readUInt32BE(at + 24)
    const flags = bytes.readUInt16BE(at + 40 + hashLength)
    // The name length (saturated at 0xfff) checks the layout, and so the hash length.
    const named = flags & 0xfff
    let name = at + fixed
    if ((flags & 0x4000) !== 0) {
      if (version < 3) throw new Unreadable('extended flags before version 3')
      name += 2
    }
    let path: string
    if (version === 4) {
      // The previous path less `drop` trailing bytes, plus a NUL-terminated suffix (git's varint).
      let byte = bytes[name++] ?? 0
      let drop = byte & 0x7f
      while ((byte & 0x80) !== 0 && drop <= previousLength) {
        byte = bytes[name++] ?? 0
        drop = (drop + 1) * 128 + (byte & 0x7f)
      }
      if (drop > previousLength) throw new Unreadable('a path drops more than the previous one has')
      const nul = bytes.indexOf(0, name)
      if (nul === -1 || nul >= end) throw new Unreadable('an unterminated path')
      const length = previousLength - drop + nul - name
      if (length !== named && !(named === 0xfff && length >= 0xfff)) throw new Unreadable('a name length disagrees')
      if (length > MAX_PATH_BYTES) throw new Unreadable(`a path of ${length} bytes`, false)
      if (length > previous.length) {
        const grown = Buffer.alloc(Math.max(length, previous.length * 2))
        previous.copy(grown, 0, 0, previousLength - drop)
        previous = grown
      }
      bytes.copy(previous, previousLength - drop, name, nul)
      previousLength = length
      path = previous.toString('utf8', 0, length)
      at = nul + 1
    } else {
      const nul = named < 0xfff ? name + named : bytes.indexOf(0, name)
      if (nul === -1 || nul >= end || bytes[nul] !== 0) throw new Unreadable('a name length disagrees')
      path = bytes.toString('utf8', name, nul)
      // 1–8 NULs pad the entry to a multiple of 8 bytes.
      at += (nul - at + 8) & ~7
    }
    decoded += path.length
    if (decoded > MAX_TRACKED_CHARS) throw new Unreadable(`paths past ${MAX_TRACKED_CHARS} characters`, false)
    if ((mode & 0o170000) === 0o040000) sparse.push(path.endsWith('/') ? path : `${path}/`)
    else paths.push(path)
  }
  // Extensions: a split index keeps most entries in a shared file, which this reader does not follow.
  while (at + 8 <= end) {
    if (bytes.toString('latin1', at, at + 4) === 'link') throw new Unreadable('a split index')
    at += 8 + bytes.readUInt32BE(at + 4)
  }
  if (at !== end) throw new Unreadable('extensions run past the end')
  return { paths, sparse }
}

/**
 * A file's bytes, refused past `limit` or when not a regular file (Unreadable), undefined when absent. `key` names this
 * version of the file, where the source can tell; a version `known` already is not read again (no `bytes`).
 */
type ReadFile = (path: string, limit: number, known?: (key: string) => boolean) => Promise<{ bytes?: Buffer, key?: string } | undefined>

/**
 * By an lstat, then one open and fstat on the local disk: what is not a regular file is never opened (a FIFO's writer
 * would be woken by us, git would block on it), nor followed through a final symlink (ELOOP). The stat, open and close
 * are synchronous (a few µs each, where a thread-pool round trip each cost a listing more than its walk of a small tree);
 * only reading an index not cached yet goes through the pool.
 */
const readBounded: ReadFile = async (path, limit, known) => {
  let fd
  try {
    const link = lstatSync(path, { bigint: true })
    if (!link.isFile()) throw new Unreadable('not a regular file', false, keyOf(link))
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined
    throw error
  }
  try {
    const info = fstatSync(fd, { bigint: true })
    if (!info.isFile()) throw new Unreadable('not a regular file', false)
    const key = keyOf(info)
    if (known?.(key) === true) return { key }
    if (info.size > BigInt(limit)) throw new Unreadable(`${info.size} bytes`, true, key)
    const size = Number(info.size)
    const bytes = Buffer.allocUnsafe(size)
    let filled = 0
    while (filled < size) {
      const bytesRead = await readAt(fd, bytes, filled, size - filled, filled)
      if (bytesRead === 0) break
      filled += bytesRead
    }
    // Shorter than fstat said: rewritten under us; what was read is not one index.
    if (filled < size) throw new Unreadable('changed while read')
    return { bytes, key }
  } finally {
    closeSync(fd)
  }
}

/** A version of a file: git replaces the index on every write, so a new identity is a new index. */
const keyOf = (info: BigIntStats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`

/** One pread through the thread pool: an index can be large, and reading it must not hold the event loop. */
const readAt = (fd: number, bytes: Buffer, offset: number, length: number, position: number) => new Promise<number>((done, fail) => {
  readFd(fd, bytes, offset, length, position, (error, count) => error === null ? done(count) : fail(error))
})

/** Through a provider (ctx.fs): lstat, then readBytes with the provider's own cap; no identity, so nothing is cached. */
function readThrough(fs: FileSystem, signal: AbortSignal): ReadFile {
  return async (path, limit) => {
    const info = await fs.lstat(path, {}, signal)
    if (info === undefined) return undefined
    if (info.type !== 'file') throw new Unreadable('not a regular file')
    if ((info.size ?? 0) > limit) throw new Unreadable(`${info.size} bytes`)
    const bytes = await fs.readBytes(await fs.resolve(path, { signal }), signal, limit)
    return { bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
  }
}

/** The git directory of a work tree whose `.git` is a directory, or a file `gitdir: <path>` (a linked worktree, a submodule). */
async function gitDirOf(root: string, read: ReadFile): Promise<string> {
  const dotGit = join(root, '.git')
  const file = await read(dotGit, MAX_GIT_FILE_BYTES).catch((error: unknown) => {
    // Not a regular file: the usual `.git` directory (ELOOP: a symlink to one, which the index path then follows).
    if (error instanceof Unreadable || (error as { code?: unknown }).code === 'ELOOP') return undefined
    throw error
  })
  if (file?.bytes === undefined) return dotGit
  const line = /^gitdir: *(.+?)\s*$/m.exec(file.bytes.toString('utf8'))
  if (line?.[1] === undefined) throw new Unreadable('a .git file without gitdir')
  return resolve(root, line[1])
}

/**
 * `git ls-files` in the work tree at `root`: the host's GIT_* variables dropped (GIT_DIR or GIT_INDEX_FILE would point
 * it elsewhere), and no fsmonitor hook, which a repository's own config could name to run a program.
 */
function lsFiles(root: string, signal: AbortSignal): Promise<string[]> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')))
  return new Promise((done, fail) => {
    execFile('git', ['-c', 'core.quotepath=off', '-c', 'core.fsmonitor=false', 'ls-files', '-z'], {
      cwd: root, encoding: 'buffer', maxBuffer: MAX_LS_FILES_BYTES, timeout: LS_FILES_TIMEOUT_MS, signal,
      env: { ...env, GIT_OPTIONAL_LOCKS: '0' },
    }, (error, stdout) => {
      if (error !== null) fail(error)
      else done(stdout.toString('utf8').split('\0').filter((path) => path !== ''))
    })
  })
}

/** Parsed indexes by file identity (device, inode, size, times): git replaces the file on every write, so a hit is current. */
const cache = new Map<string, Tracked>()
const CACHED = 8

/**
 * What git tracks in the work tree at `root` (a process path): its index, else `git ls-files`, else UNKNOWN. Through a
 * provider (`fs`), the index is read by ctx.fs and git is not run: it would run on the host, not in the provider's world.
 */
export async function trackedPaths(root: string, signal: AbortSignal, fs?: FileSystem): Promise<Tracked> {
  const read = fs === undefined ? readBounded : readThrough(fs, signal)
  let key: string | undefined
  try {
    const path = join(await gitDirOf(root, read), 'index')
    let index = await read(path, MAX_INDEX_BYTES, (version) => cache.has(`${root}\0${version}`))
    key = index?.key === undefined ? undefined : `${root}\0${index.key}`
    const hit = key === undefined ? undefined : cache.get(key)
    if (hit !== undefined) return hit
    // Known when stat'ed, since dropped by another call: read it after all.
    if (index !== undefined && index.bytes === undefined) index = await read(path, MAX_INDEX_BYTES)
    // No index yet (a fresh `git init`): nothing is tracked.
    if (index?.bytes === undefined) return new TrackedPaths('index', [])
    const { paths, sparse } = parseIndex(index.bytes)
    const tracked = new TrackedPaths('index', paths, sparse)
    return remember(key, tracked)
  } catch (error) {
    signal.throwIfAborted()
    if (error instanceof Unreadable && error.key !== undefined) key = `${root}\0${error.key}`
    // Past a bound, or not a regular file: git would decode the same gigabytes or block on the FIFO.
    if (error instanceof Unreadable && !error.askGit) return remember(key, UNKNOWN)
  }
  if (fs !== undefined) return UNKNOWN
  try {
    return remember(key, new TrackedPaths('git', await lsFiles(root, signal)))
  } catch {
    signal.throwIfAborted()
    // Remembered until the index changes: a git that failed (timed out on a blocked read) is not asked on every listing.
    return remember(key, UNKNOWN)
  }
}

function remember(key: string | undefined, tracked: Tracked): Tracked {
  if (key === undefined) return tracked
  if (cache.size >= CACHED) cache.delete(cache.keys().next().value as string)
  cache.set(key, tracked)
  return tracked
}
