/**
 * What to spawn for one call: the argv (confined by ctx.sandbox when composed), the working
 * directory and the environment. Foreground and background share it, so both run under the
 * same sandbox policy and shell environment as first-party bash.
 */
import { statSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { FsError } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { SandboxExecutionPolicy } from '@deepseek-ai/dsh-sandbox'
import { scrubbedParentEnv } from '@deepseek-ai/dsh-subprocess'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type {} from '@deepseek-ai/dsh-shell-env'

export interface Launch {
  argv: [string, ...string[]]
  cwd: string
  env: NodeJS.ProcessEnv
}

/** The same non-interactive defaults first-party bash gives its commands. */
const ENV_DEFAULTS = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }

export async function planLaunch(ctx: Context, command: string, exec: ToolExecution): Promise<Launch> {
  const sandbox = ctx.get('sandbox')
  const sandboxPolicy = ctx.get('sandboxPolicy')
  if (sandbox !== undefined && sandboxPolicy === undefined) {
    throw new HarnessError('bash_bg: ctx.sandbox is composed but ctx.sandboxPolicy is not — add @deepseek-ai/dsh-sandbox-policy to the composition', 'SANDBOX_UNAVAILABLE')
  }
  const policy: SandboxExecutionPolicy | undefined = sandboxPolicy?.resolve(exec.agent === undefined ? {} : { session: exec.agent.session })
  const cwd = policy?.workspaceRoot ?? exec.agent?.session.header.cwd ?? await defaultCwd(ctx)
  assertDirectory(cwd)
  // As first-party bash builds it: the host env without credential-shaped names (*KEY*, *TOKEN*,
  // *SECRET*, *PASSWORD*) or stale DSH_* facts, then the defaults, then this call's DSH_* facts.
  const env = { ...scrubbedParentEnv(), ...ENV_DEFAULTS, ...ctx.get('shellEnv')?.collect(exec) }
  const argv: [string, ...string[]] = ['bash', '-c', command]
  if (sandbox === undefined || policy === undefined || policy.mode === 'danger-full-access') {
    return { argv, cwd, env }
  }
  // Throws the host's SandboxUnavailableError (SANDBOX_UNAVAILABLE) when no backend is usable.
  const confined = sandbox.confine(argv, { ...policy, mode: policy.mode })
  const [program, ...args] = confined.argv
  if (program === undefined) throw new HarnessError('bash_bg: the sandbox returned an empty argv', 'SANDBOX_UNAVAILABLE')
  return { argv: [program, ...args], cwd, env }
}

/** The one error for a program that could not be started, foreground or background. */
export function spawnFailed(program: string, cause?: unknown): HarnessError {
  return new HarnessError(`bash_bg: could not start ${program} — check that it is installed and on PATH`, 'SPAWN_FAILED', cause === undefined ? undefined : { cause })
}

/** A call with no agent runs where the filesystem provider's relative paths resolve. */
async function defaultCwd(ctx: Context): Promise<string> {
  const fs = ctx.get('fs')
  if (fs === undefined) return process.cwd()
  return fs.processPath(await fs.resolve('.'))
}

function assertDirectory(cwd: string): void {
  let isDirectory = false
  try {
    isDirectory = statSync(cwd).isDirectory()
  } catch {
    throw new FsError(`working directory ${cwd} no longer exists — recreate it, or start the session in an existing directory`, 'FS_NOT_FOUND')
  }
  if (!isDirectory) throw new FsError(`working directory ${cwd} is not a directory — start the session in a directory`, 'FS_NOT_DIRECTORY')
}
