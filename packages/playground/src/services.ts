// The host services the console and the prompt-cost measurement stand on.
import type { Context } from '@deepseek-ai/cordis'
import { bootServices } from '@gencode-ai/testkit'
import * as ShellEnv from '@deepseek-ai/dsh-shell-env'
import Commands from '@deepseek-ai/dsh-commands'

/**
 * The real host services both the console and the prompt-cost measurement stand on: the test
 * kit's boot, plus the shell environment and the command registry; no tool registers here.
 * `cwd` is the filesystem provider's default cwd.
 */
export async function bootHostServices(cwd: string): Promise<Context> {
  const ctx = await bootServices({ cwd })
  await ctx.plugin(ShellEnv, {})
  await ctx.plugin(Commands)
  return ctx
}
