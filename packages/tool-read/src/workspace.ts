/**
 * The workspace of a call and whether a target lies inside it. Same semantics as
 * tool-list-dir's workspace policy (each package keeps its own copy: no shared runtime code).
 */

import type { Context } from '@deepseek-ai/cordis'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { PreToolDecision } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type { OutsideWorkspace } from './config.ts'

/**
 * The part of tool-bash-bg's `backgroundShells` service (BackgroundShellRegistry in
 * packages/tool-bash-bg/src/registry-types.ts) this plugin reads: the private log directory.
 * Structural on purpose, so this package installs and type-checks without tool-bash-bg.
 */
export interface ShellLogSource {
  readonly logDir: string
}

/** The directory relative paths resolve against, or undefined for the provider's default cwd. */
export function workspaceDir(ctx: Context, exec: Pick<ToolExecution, 'agent'>): string | undefined {
  const policy = ctx.get('sandboxPolicy')
  if (policy !== undefined) return policy.resolve(exec.agent ? { session: exec.agent.session } : {}).workspaceRoot
  return exec.agent?.session.header.cwd
}

export interface Placement {
  target: FsTarget
  /** The workspace as the provider resolved it. */
  root: FsTarget
  inside: boolean
}

/**
 * Resolve `filePath` for a call and test realpath containment (ctx.fs targets are symlink
 * resolved, so a link inside the workspace pointing out of it counts as outside). The
 * background-shell log directory counts as inside when tool-bash-bg is composed.
 */
export async function place(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal'>, filePath: string): Promise<Placement> {
  const dir = workspaceDir(ctx, exec)
  const signal = exec.signal
  const root = await ctx.fs.resolve(dir ?? '.', { signal })
  const target = await ctx.fs.resolve(filePath, { ...dir === undefined ? {} : { cwd: dir }, signal })
  if (ctx.fs.contains(root, target)) return { target, root, inside: true }
  const shells = ctx.get('backgroundShells') as ShellLogSource | undefined
  if (typeof shells?.logDir === 'string') {
    const logs = await ctx.fs.resolve(shells.logDir, { signal })
    if (ctx.fs.contains(logs, target)) return { target, root, inside: true }
  }
  return { target, root, inside: false }
}

/**
 * The outside-workspace policy as a tools/pre-execute listener for our tool's calls: `ask` goes
 * through the host's approval seam (the host turns it into a denial when no approval service is
 * composed), `deny` refuses. Anything it cannot judge (bad arguments, a failing resolve) passes
 * on to execute, which reports it.
 */
export function gateOutside(ctx: Context, toolName: string, policy: Exclude<OutsideWorkspace, 'allow'>) {
  return async (exec: ToolExecution, next: () => Promise<PreToolDecision>): Promise<PreToolDecision> => {
    if (exec.name !== toolName) return next()
    const filePath = (exec.arguments as { file_path?: unknown } | null)?.file_path
    if (typeof filePath !== 'string' || filePath.trim() === '') return next()
    let placement: Placement
    try {
      placement = await place(ctx, exec, filePath)
    } catch {
      return next()
    }
    if (placement.inside) return next()
    const reason = `${placement.target.displayPath} is outside the workspace ${placement.root.displayPath}`
    return policy === 'deny'
      ? { kind: 'deny', reason: `${reason} (outsideWorkspace: deny) — read a file inside the workspace` }
      : { kind: 'ask', reason }
  }
}
