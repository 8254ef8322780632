import { mkdtemp, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { bootHost, type Host, type HostOptions } from '@gencode-ai/testkit'
import * as Read from '../src/index.ts'
import type { Config } from '../src/config.ts'

export { Read }

/** The real host with tool-read loaded (the fs provider's cwd is a fresh temp dir). */
export async function readHost(config: Partial<Config> = {}, options: HostOptions = {}): Promise<Host> {
  const host = await bootHost(options)
  await host.ctx.plugin(Read, config)
  return host
}

/** Write files under `root`; returns the absolute path of the first. */
export async function files(root: string, tree: Record<string, string | Uint8Array>): Promise<string> {
  let first = ''
  for (const [rel, content] of Object.entries(tree)) {
    const path = join(root, rel)
    await writeFile(path, content)
    if (first === '') first = path
  }
  return first
}

export { mkdtemp }
