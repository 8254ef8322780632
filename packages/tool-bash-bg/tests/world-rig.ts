/**
 * A real second execution world for the tests: a ctx.subprocess that runs every command in its own mount
 * namespace (`unshare -rm`) where a different directory is bound over the workspace path, and a ctx.fs whose
 * paths map to that same directory. The host's copy of the workspace is never what the world sees.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, realpathSync } from 'node:fs'
import { join, relative, resolve, sep, isAbsolute } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { Agent } from '@deepseek-ai/dsh-agent'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import { LocalSubprocessRuntime } from '@deepseek-ai/dsh-subprocess-local'
import type { SubprocessHandle, SubprocessSpawnSpec } from '@deepseek-ai/dsh-subprocess'
import { bootServices, makeTmpDir, removeTmpDir, ScriptedAdapter } from '@gencode-ai/testkit'

/** Why the world cannot be built here, or undefined when it can. */
export function namespacesUnavailable(): string | undefined {
  const probe = spawnSync('unshare', ['-rm', 'true'], { encoding: 'utf8' })
  if (probe.error !== undefined) return `unshare is not runnable here (${probe.error.message})`
  if (probe.status !== 0) return `user and mount namespaces are not permitted here (unshare -rm: ${probe.stderr.trim() || `exit ${probe.status}`})`
  return undefined
}

export interface WorldPaths {
  /** The path every party names: the host's own directory there, and the world's mount over it. */
  workspace: string
  /** What the world sees at `workspace`. */
  worldDir: string
}

/** In the new namespace: bind the world's directory over the workspace, enter the call's cwd, exec the command. */
const ENTER = 'mount --bind "$1" "$2" && cd "$3" && shift 3 && exec "$@"'

/** `path` under `from` moved under `to`; any other path as it is. */
function swap(path: string, from: string, to: string): string {
  const rel = relative(from, path)
  return rel === '' ? to : rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel) ? path : join(to, rel)
}

/** Runs each command through dsh-subprocess-local's own machinery, but in the world: a subclass that overrides spawn. */
function namespaceWorld(paths: WorldPaths) {
  return class NamespaceWorld extends LocalSubprocessRuntime {
    override spawn(spec: SubprocessSpawnSpec): SubprocessHandle {
      const argv = ['unshare', '-rm', '--', 'bash', '-c', ENTER, 'world', paths.worldDir, paths.workspace, spec.cwd, ...spec.argv]
      return super.spawn({ ...spec, argv, cwd: '/' })
    }
  }
}

/** ctx.fs of the same world: a path under the workspace names the world's file; processPath gives it back as the world names it. */
export function worldFileSystem(paths: WorldPaths) {
  return class WorldFileSystem extends LocalFileSystem {
    override async resolve(path: string, opts?: { cwd?: string, signal?: AbortSignal }): Promise<FsTarget> {
      const absolute = resolve(opts?.cwd ?? paths.workspace, path)
      const signal = opts?.signal === undefined ? {} : { signal: opts.signal }
      const target = await super.resolve(swap(absolute, paths.workspace, paths.worldDir), signal)
      return { ...target, displayPath: swap(target.displayPath, paths.worldDir, paths.workspace) }
    }

    override processPath(target: FsTarget): string {
      return swap(super.processPath(target), paths.worldDir, paths.workspace)
    }
  }
}

export interface WorldHost {
  ctx: Context
  paths: WorldPaths
  agent(id?: string): Agent
  dispose(): Promise<void>
}

let agents = 0

/**
 * The real DSH host services (testkit's bootServices) with the world's filesystem in place of
 * the local one and, unless `subprocess` is false, the world's ctx.subprocess.
 */
export async function bootWorld(options: { subprocess?: boolean, before?: (ctx: Context) => Promise<void> } = {}): Promise<WorldHost> {
  const root = realpathSync(await makeTmpDir())
  const paths = { workspace: join(root, 'workspace'), worldDir: join(root, 'world') }
  mkdirSync(paths.workspace)
  mkdirSync(paths.worldDir)
  const ctx = await bootServices({ cwd: paths.workspace, fileSystem: worldFileSystem(paths) })
  if (options.subprocess !== false) await ctx.plugin(namespaceWorld(paths))
  ctx.llm.registerAdapter(['mock'], new ScriptedAdapter([], false))
  await options.before?.(ctx)
  return {
    ctx,
    paths,
    agent: (id = `w${++agents}`) => ctx.agentLoop.create(SessionId(id), { provider: 'mock', model: 'mock' }, { cwd: paths.workspace }),
    async dispose() {
      await ctx.fiber.dispose()
      await removeTmpDir(root)
    },
  }
}
