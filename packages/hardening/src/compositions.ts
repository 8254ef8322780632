// The two compositions a bash_bg case runs in: our own local process layer, and the composed ctx.subprocess.
import type { SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import { LocalSubprocessRuntime } from '@deepseek-ai/dsh-subprocess-local'
import { bootHost, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'

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

/** The event loop's worst lateness while `work` runs, sampled by a 10 ms timer. */
export async function loopLateness<T>(work: Promise<T>): Promise<{ result: T, worstMs: number }> {
  let worstMs = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    worstMs = Math.max(worstMs, now - last - 10)
    last = now
  }, 10)
  try {
    return { result: await work, worstMs }
  } finally {
    clearInterval(timer)
  }
}
