// The ctx.fs listing source, for sandboxing and remote providers.
import type { Context } from '@deepseek-ai/cordis'
import { dirname, join } from 'node:path'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import type { Child } from '../types.ts'
import { type Dir, type DirSource, type LinkMode, MAX_SMALL_FILE } from './source.ts'

const LSTAT_BATCH = 64

/** A directory through ctx.fs: the provider's target for it (the listed one and those below), or its process path (above). */
export interface ProviderDir extends Dir {
  readonly target?: FsTarget
}

/** Listing through ctx.fs (sandboxing and remote providers): followed types and file sizes, no times, permissions or link text. */
export class ProviderSource implements DirSource<ProviderDir> {
  readonly kind = 'provider'
  readonly metadata = false
  private readonly targets = new WeakMap<Child, FsTarget>()

  constructor(private readonly ctx: Context) {}

  async children(dir: ProviderDir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    const listed = await this.ctx.fs.listDir(targetOf(dir), signal)
    const children = listed.map((entry): Child => {
      const child: Child = { name: entry.name, type: entry.type, ...entry.size === undefined ? {} : { size: entry.size } }
      this.targets.set(child, entry.target)
      return child
    })
    if (links === 'follow') return children
    // One lstat per child finds the links, a batch at a time; a child whose lstat fails might be one: never descended.
    for (let start = 0; start < children.length; start += LSTAT_BATCH) {
      await Promise.all(children.slice(start, start + LSTAT_BATCH).map(async (child) => {
        const info = await this.ctx.fs.lstat(child.name, { cwd: dir.display }, signal).catch(() => undefined)
        if (info !== undefined && info.type !== 'symlink') return
        child.type = info === undefined ? 'other' : 'symlink'
        delete child.size
      }))
    }
    return children
  }

  child(dir: ProviderDir, name: string, from: Child): ProviderDir {
    const target = this.targets.get(from)
    return { display: join(dir.display, name), ...target ? { target } : {} }
  }

  // Sizes came with the listing; nothing else is available through ctx.fs.
  async details(): Promise<void> {}

  async count(dir: ProviderDir, signal: AbortSignal): Promise<number> {
    return (await this.ctx.fs.listDir(targetOf(dir), signal)).length
  }

  async readSmall(dir: ProviderDir, name: string, signal: AbortSignal): Promise<string | undefined> {
    try {
      const info = await this.ctx.fs.lstat(name, { cwd: where(dir) }, signal)
      if (info?.type !== 'file' || (info.size ?? 0) > MAX_SMALL_FILE) return undefined
      const target = await this.ctx.fs.resolve(name, { cwd: where(dir), signal })
      return new TextDecoder().decode(await this.ctx.fs.readBytes(target, signal, MAX_SMALL_FILE))
    } catch {
      return undefined
    }
  }

  async exists(dir: ProviderDir, name: string, signal: AbortSignal): Promise<boolean> {
    return await this.ctx.fs.lstat(name, { cwd: where(dir) }, signal).then((info) => info !== undefined, () => false)
  }

  parent(dir: ProviderDir): ProviderDir | undefined {
    const up = dirname(where(dir))
    return up === where(dir) ? undefined : { display: up, local: up }
  }
}

/** A directory as a path ctx.fs resolves: its process path when known (the root and above), else its display path. */
const where = (dir: ProviderDir): string => dir.local ?? dir.display

/** Every directory this source hands out carries its provider target. */
function targetOf(dir: ProviderDir): FsTarget {
  if (dir.target === undefined) throw new Error(`${dir.display}: no provider target`)
  return dir.target
}
