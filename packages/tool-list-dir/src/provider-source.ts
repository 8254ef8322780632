import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-fs'
import { join } from 'node:path'
import type { Child, Dir, DirSource, LinkMode } from './types.ts'

const LSTAT_BATCH = 64

/**
 * Listing through ctx.fs, so sandboxing and remote providers keep working. The provider reports
 * followed types and file sizes; in `keep` mode one ctx.fs.lstat per child finds the symlinks.
 * Modification times, permissions and link text are not part of the ctx.fs contract.
 */
export class ProviderSource implements DirSource {
  readonly kind = 'provider'
  readonly metadata = false
  private readonly targets = new WeakMap<Child, Dir['target']>()

  constructor(private readonly ctx: Context) {}

  async children(dir: Dir, links: LinkMode, signal: AbortSignal): Promise<Child[]> {
    const listed = await this.ctx.fs.listDir(dir.target!, signal)
    const children = listed.map((entry): Child => {
      const child: Child = { name: entry.name, type: entry.type }
      if (entry.size !== undefined) child.size = entry.size
      this.targets.set(child, entry.target)
      return child
    })
    if (links === 'keep') {
      // One ctx.fs.lstat per child finds the links, a bounded number at a time. A child whose
      // lstat fails (vanished, unreadable) is never descended: it might be a link.
      for (let start = 0; start < children.length; start += LSTAT_BATCH) {
        await Promise.all(children.slice(start, start + LSTAT_BATCH).map(async (child) => {
          const info = await this.ctx.fs.lstat(child.name, { cwd: dir.display }, signal).catch(() => undefined)
          if (info?.type === 'symlink' || info === undefined) {
            child.type = info === undefined ? 'other' : 'symlink'
            delete child.size
          }
        }))
      }
    }
    return children
  }

  child(dir: Dir, name: string, from: Child): Dir {
    const target = this.targets.get(from)
    return { display: join(dir.display, name), ...target ? { target } : {} }
  }

  async details(): Promise<void> {
    // Sizes came with the listing; nothing else is available through ctx.fs.
  }
}
