/** What to spawn for one call: under the same sandbox policy and shell environment as first-party bash, in the call's world. */
import { statSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { FsError, type FileSystem } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { SandboxExecutionPolicy } from '@deepseek-ai/dsh-sandbox'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type {} from '@deepseek-ai/dsh-shell-env'
import type { Launch } from '../contract.ts'
import type { ShellWorld } from './world-types.ts'

/** The same non-interactive defaults first-party bash gives its commands. */
const ENV_DEFAULTS = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' } as const

/** `world`: where the call runs; its cwd is checked there, and its base environment comes first. */
export async function planLaunch(ctx: Context, toolName: string, world: ShellWorld, command: string, exec: ToolExecution): Promise<Launch> {
  const sandbox = ctx.get('sandbox')
  const sandboxPolicy = ctx.get('sandboxPolicy')
  if (sandbox !== undefined && sandboxPolicy === undefined) {
    throw new HarnessError(`${toolName}: ctx.sandbox is composed but ctx.sandboxPolicy is not — add @deepseek-ai/dsh-sandbox-policy to the composition`, 'SANDBOX_UNAVAILABLE')
  }
  const policy: SandboxExecutionPolicy | undefined = sandboxPolicy?.resolve(exec.agent === undefined ? {} : { session: exec.agent.session })
  const fs = ctx.get('fs')
  // A call with no agent runs where the filesystem provider's relative paths resolve.
  const cwd = policy?.workspaceRoot ?? exec.agent?.session.header.cwd
    ?? (fs === undefined ? process.cwd() : fs.processPath(await fs.resolve('.')))
  const isDirectory = await world.directory(cwd)
  if (isDirectory === undefined) {
    throw new FsError(`working directory ${cwd} no longer exists — recreate it, or start the session in an existing directory`, 'FS_NOT_FOUND')
  }
  if (!isDirectory) throw new FsError(`working directory ${cwd} is not a directory — start the session in a directory`, 'FS_NOT_DIRECTORY')
  // As first-party bash builds it: the world's base (locally the host env without credential-shaped names or stale
  // DSH_* facts), then the defaults, then this call's DSH_* facts.
  const env = { ...world.baseEnv(), ...ENV_DEFAULTS, ...ctx.get('shellEnv')?.collect(exec) }
  const argv: [string, ...string[]] = ['bash', '-c', command]
  if (sandbox === undefined || policy === undefined || policy.mode === 'danger-full-access') return { argv, cwd, env }
  // Throws the host's SandboxUnavailableError (SANDBOX_UNAVAILABLE) when no backend is usable.
  // From host 0.1.6 confine returns a Promise of the plan; rc.8 returns the plan itself.
  const [program, ...args] = (await Promise.resolve(sandbox.confine(argv, { ...policy, mode: policy.mode }))).argv
  if (program === undefined) throw new HarnessError(`${toolName}: the sandbox returned an empty argv`, 'SANDBOX_UNAVAILABLE')
  return { argv: [program, ...args], cwd, env }
}

/** Undefined when nothing is there. */
export function localDirectory(cwd: string): Promise<boolean | undefined> {
  try {
    return Promise.resolve(statSync(cwd).isDirectory())
  } catch {
    return Promise.resolve(undefined)
  }
}

/** Through the world's own filesystem; with none composed, the provider's spawn is the only judge. */
export async function worldDirectory(fs: FileSystem | undefined, cwd: string): Promise<boolean | undefined> {
  if (fs === undefined) return true
  try {
    const info = await fs.stat(await fs.resolve(cwd))
    return info === undefined ? undefined : info.type === 'directory'
  } catch {
    return undefined
  }
}
