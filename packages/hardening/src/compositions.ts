// The two compositions a bash_bg case runs in: our own local process layer, and the composed ctx.subprocess.
import type { SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import { LocalSubprocessRuntime } from '@deepseek-ai/dsh-subprocess-local'
import { bootHost, type Host } from '@gencode-ai/testkit'
import { afterAll, beforeAll } from 'vitest'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import { markedPids, until } from './procs.ts'

/**
 * dsh-subprocess-local with its own spawn behind an override: by shape no longer the unmodified local runtime, so
 * bash_bg runs every command through ctx.subprocess (values say `world: "subprocess"`), as under another provider.
 */
export class SeamRuntime extends LocalSubprocessRuntime {
  override spawn(spec: SubprocessSpawnSpec) {
    return super.spawn(spec)
  }
}

export const COMPOSITIONS = [
  { name: 'the local process layer', world: undefined, boot: () => bootBashBg(false) },
  { name: 'ctx.subprocess', world: 'subprocess', boot: () => bootBashBg(true) },
] as const

async function bootBashBg(seam: boolean): Promise<Host> {
  const host = await bootHost()
  if (seam) await host.ctx.plugin(SeamRuntime)
  await host.ctx.plugin(BashBg, {})
  return host
}

/**
 * The host a describe block's cases share: booted before them and disposed after them, when no process carrying `mark`
 * (markChildren) may be left. Read it inside a case or hook.
 */
export function sharedHost(boot: () => Promise<Host>, mark: string): () => Host {
  let host: Host | undefined
  beforeAll(async () => {
    host = await boot()
  })
  afterAll(async () => {
    await host?.dispose()
    await until(() => markedPids(mark).length === 0, 'no marked process left after dispose')
  })
  return () => {
    if (host === undefined) throw new Error('the shared host is read before it was booted')
    return host
  }
}
