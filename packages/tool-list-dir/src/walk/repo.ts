// The repository a listing lies in: its .gitignore rules from the git root down, and what git tracks there.
import { basename } from 'node:path'
import type { FileSystem } from '@deepseek-ai/dsh-fs'
import { trackedPaths, UNKNOWN } from '../filters/git-index.ts'
import { GitIgnore } from '../filters/gitignore.ts'
import type { Dir, DirSource } from './source.ts'

/** The rules from the git root down to the listed directory's parent; `prefix`: the listed directory, git-relative. */
export type Repo = NonNullable<Awaited<ReturnType<typeof findRepo>>>

/**
 * The rules from the git root (`.git`: a directory, or a worktree's file) down. Undefined outside a repository, and for a
 * gitignored directory: what was asked for explicitly is listed in full.
 */
export async function findRepo<D extends Dir>(source: DirSource<D>, root: D, signal: AbortSignal, fs?: FileSystem) {
  const chain: D[] = []
  for (let dir: D | undefined = root; dir !== undefined; dir = source.parent(dir)) {
    chain.push(dir)
    if (await source.exists(dir, '.git', signal)) break
    if (source.parent(dir) === undefined) return undefined
  }
  chain.reverse() // the git root first, the listed directory last
  const names = chain.slice(1).map((dir) => `${basename(dir.local ?? dir.display)}/`)
  let rules = new GitIgnore()
  for (const [index, dir] of chain.slice(0, -1).entries()) {
    const text = await source.readSmall(dir, '.gitignore', signal)
    if (text !== undefined) rules = rules.with(names.slice(0, index).join(''), text)
  }
  const prefix = names.join('')
  if (prefix !== '' && rules.ignores(names.slice(0, -1).join(''), basename(root.local ?? root.display), true)) return undefined
  // What git tracks: off the local disk on the fast path, else through the provider (`fs`).
  const top = chain[0]
  const tracked = top?.local === undefined || (source.kind === 'provider' && fs === undefined)
    ? UNKNOWN
    : await trackedPaths(top.local, signal, source.kind === 'local' ? undefined : fs)
  return { rules: rules.tracking(tracked), prefix, tracked: tracked.source, root: top?.local }
}
