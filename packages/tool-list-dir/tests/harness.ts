import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { bootHost, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../src/index.ts'
import { parseArgs, type ListArgs } from '../src/args.ts'
import type { Config } from '../src/config.ts'
import { listDirectory } from '../src/list.ts'
import type { Listing } from '../src/types.ts'
import { type ListingCache, SETTLED_MS } from '../src/walk/listing-cache.ts'
import { LocalSource } from '../src/walk/local-source.ts'
import { ProviderSource } from '../src/walk/provider-source.ts'

export { ListDir }

/** The real host with tool-list-dir loaded (the fs provider's cwd is a fresh temp dir). */
export async function listDirHost(config: Partial<Config> = {}, options: Parameters<typeof bootHost>[0] = {}): Promise<Host> {
  const host = await bootHost(options)
  await host.ctx.plugin(ListDir, config)
  return host
}

/** One listing through the chosen source, the gate left out: differential specs compare them. */
export function listThrough(host: Host, args: ListArgs, source: 'local' | 'provider', signal = new AbortController().signal): Promise<Listing> {
  return listDirectory(
    host.ctx,
    { signal, token: Symbol('call') as never },
    parseArgs(args, 100),
    undefined,
    () => source === 'local' ? new LocalSource() : new ProviderSource(host.ctx),
  )
}

/** A walk with `cache`, as if it started `since` (by default long after the tree was made, so what was just made counts as settled). */
export function listCached(host: Host, args: ListArgs, cache: ListingCache, since = Date.now() + SETTLED_MS + 60_000): Promise<Listing> {
  const exec = { signal: new AbortController().signal, token: Symbol('call') as never }
  return listDirectory(host.ctx, exec, parseArgs(args, 100), undefined, () => new LocalSource(cache, since))
}

/** Write a tree: keys are relative paths; a string value is file content, `null` a directory, `{ link }` a symlink. */
export async function makeTree(root: string, tree: Record<string, string | null | { link: string }>): Promise<void> {
  for (const [rel, content] of Object.entries(tree)) {
    const path = join(root, rel)
    await mkdir(content === null ? path : dirname(path), { recursive: true })
    if (content === null) continue
    if (typeof content === 'string') await writeFile(path, content)
    else await symlink(content.link, path)
  }
}
