import type { Context } from '@deepseek-ai/cordis'
import type { FsTarget } from '@deepseek-ai/dsh-fs'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { OutsideWorkspace } from './config.ts'

/**
 * The workspace of a call: the sandbox policy's root when one is composed, else the calling
 * session's cwd; undefined (the provider's default cwd) for a call with no agent.
 */
export function workspaceCwd(ctx: Context, exec: Pick<ToolExecution, 'agent'>): string | undefined {
  const policy = ctx.get('sandboxPolicy')
  if (policy !== undefined) return policy.resolve(exec.agent ? { session: exec.agent.session } : {}).workspaceRoot
  return exec.agent?.session.header.cwd
}

export interface Placed {
  target: FsTarget
  root: FsTarget
  /** Symlink-safe: both sides are realpath identities. */
  inside: boolean
}

/** Resolve a path argument against the call's workspace and say whether it stays inside. */
export async function place(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal'>, path: string): Promise<Placed> {
  const cwd = workspaceCwd(ctx, exec)
  const options = cwd === undefined ? { signal: exec.signal } : { cwd, signal: exec.signal }
  const [root, target] = await Promise.all([ctx.fs.resolve('.', options), ctx.fs.resolve(path, options)])
  return { target, root, inside: ctx.fs.contains(root, target) }
}

/**
 * The outside-workspace policy, as a `tools/pre-execute` decision for this tool's calls: `ask`
 * goes through the host's approval seam (denied when no approval service is composed), `deny`
 * refuses. Arguments that do not even name a path are left to the tool's own validation.
 */
export function gateOutsideWorkspace(ctx: Context, toolName: string, policy: OutsideWorkspace): void {
  if (policy === 'allow') return
  ctx.on('tools/pre-execute', async (exec, next) => {
    if (exec.name !== toolName) return next()
    const path = (exec.arguments as { path?: unknown } | null)?.path
    if (typeof path !== 'string' || path.trim() === '' || path.includes('\0')) return next()
    const placed = await place(ctx, exec, path).catch(() => undefined)
    if (placed === undefined || placed.inside) return next()
    const reason = `${placed.target.displayPath} is outside the workspace ${placed.root.displayPath}`
    return policy === 'deny'
      ? { kind: 'deny', reason: `${reason} (outsideWorkspace: deny) — list a path inside the workspace` }
      : { kind: 'ask', reason }
  })
}
