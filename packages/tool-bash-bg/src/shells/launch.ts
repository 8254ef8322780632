/** What to spawn for one call (under the same sandbox policy and shell environment as first-party bash), and the spawn. */
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { statSync } from 'node:fs'
import type { Readable } from 'node:stream'
import type { Context } from '@deepseek-ai/cordis'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { FsError, type FileSystem } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { SandboxExecutionPolicy } from '@deepseek-ai/dsh-sandbox'
import { scrubbedParentEnv } from '@deepseek-ai/dsh-subprocess'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type {} from '@deepseek-ai/dsh-shell-env'
import type { WorldChoice } from './world.ts'

/** `env`: the whole environment in the local world; only the explicit entries (the provider adds its own base) in another. */
export interface Launch {
  argv: [string, ...string[]]
  cwd: string
  env: NodeJS.ProcessEnv
}

/** The same non-interactive defaults first-party bash gives its commands. */
const ENV_DEFAULTS = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }

/** `world`: where the call runs; its cwd is checked there, and another world's provider brings its own base env. */
export async function planLaunch(ctx: Context, command: string, exec: ToolExecution, world: WorldChoice): Promise<Launch> {
  const sandbox = ctx.get('sandbox')
  const sandboxPolicy = ctx.get('sandboxPolicy')
  if (sandbox !== undefined && sandboxPolicy === undefined) {
    throw new HarnessError('bash_bg: ctx.sandbox is composed but ctx.sandboxPolicy is not — add @deepseek-ai/dsh-sandbox-policy to the composition', 'SANDBOX_UNAVAILABLE')
  }
  const policy: SandboxExecutionPolicy | undefined = sandboxPolicy?.resolve(exec.agent === undefined ? {} : { session: exec.agent.session })
  const fs = ctx.get('fs')
  // A call with no agent runs where the filesystem provider's relative paths resolve.
  const cwd = policy?.workspaceRoot ?? exec.agent?.session.header.cwd
    ?? (fs === undefined ? process.cwd() : fs.processPath(await fs.resolve('.')))
  const isDirectory = world.kind === 'local' ? localDirectory(cwd) : await worldDirectory(fs, cwd)
  if (isDirectory === undefined) {
    throw new FsError(`working directory ${cwd} no longer exists — recreate it, or start the session in an existing directory`, 'FS_NOT_FOUND')
  }
  if (!isDirectory) throw new FsError(`working directory ${cwd} is not a directory — start the session in a directory`, 'FS_NOT_DIRECTORY')
  // As first-party bash builds it: the host env without credential-shaped names or stale DSH_* facts
  // (another world's provider applies its own), then the defaults, then this call's DSH_* facts.
  const explicit = { ...ENV_DEFAULTS, ...ctx.get('shellEnv')?.collect(exec) }
  const env = world.kind === 'local' ? { ...scrubbedParentEnv(), ...explicit } : explicit
  const argv: [string, ...string[]] = ['bash', '-c', command]
  if (sandbox === undefined || policy === undefined || policy.mode === 'danger-full-access') return { argv, cwd, env }
  // Throws the host's SandboxUnavailableError (SANDBOX_UNAVAILABLE) when no backend is usable.
  // From host 0.1.6 confine returns a Promise of the plan; rc.8 returns the plan itself.
  const [program, ...args] = (await Promise.resolve(sandbox.confine(argv, { ...policy, mode: policy.mode }))).argv
  if (program === undefined) throw new HarnessError('bash_bg: the sandbox returned an empty argv', 'SANDBOX_UNAVAILABLE')
  return { argv: [program, ...args], cwd, env }
}

/** Undefined when nothing is there. */
function localDirectory(cwd: string): boolean | undefined {
  try {
    return statSync(cwd).isDirectory()
  } catch {
    return undefined
  }
}

/** Through the world's own filesystem; with none composed, the provider's spawn is the only judge. */
async function worldDirectory(fs: FileSystem | undefined, cwd: string): Promise<boolean | undefined> {
  if (fs === undefined) return true
  try {
    const info = await fs.stat(await fs.resolve(cwd))
    return info === undefined ? undefined : info.type === 'directory'
  } catch {
    return undefined
  }
}

type Piped = ChildProcessByStdio<null, Readable, Readable>

/** Spawn the leader of a new process group with piped output; throws when nothing started (`shown`: the program named then). */
export function spawnGroup(launch: Launch, marks: Record<string, string> = {}, shown?: string): Piped {
  const [program, ...args] = launch.argv
  const failed = (cause?: unknown) => new HarnessError(
    `bash_bg: could not start ${shown ?? program} — check that it is installed and on PATH`, 'SPAWN_FAILED', cause === undefined ? undefined : { cause },
  )
  let child: Piped
  try {
    child = spawn(program, args, { cwd: launch.cwd, env: { ...launch.env, ...marks }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    // Arguments spawn cannot pass (a NUL byte) throw synchronously.
    throw failed(error)
  }
  if (child.pid === undefined) {
    child.once('error', () => {})
    throw failed()
  }
  return child
}

/** True once every stream closed; false after `ms`, when given. */
export function closed(streams: readonly Readable[], ms?: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = ms === undefined ? undefined : setTimeout(() => resolve(false), ms).unref()
    void Promise.all(streams.map((stream) => new Promise((done) => {
      if (stream.destroyed || stream.readableEnded) done(undefined)
      else stream.once('close', done)
    }))).then(() => { clearTimeout(timer); resolve(true) })
  })
}
