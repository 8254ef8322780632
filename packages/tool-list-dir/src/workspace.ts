import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type { ToolExecution, ToolExecutionToken } from '@deepseek-ai/dsh-tools'
import type { OutsideWorkspace } from './config.ts'
import { quoted } from './errors.ts'

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
 * The outside-workspace policy. Before dispatch it is a `tools/pre-execute` decision for this
 * tool's calls: `ask` goes through the host's approval seam (denied when no approval service is
 * composed), `deny` refuses. The tool body checks again with what it actually lists: a path
 * that was inside when checked but resolves outside at use (swapped for a symlink in between)
 * is refused, and an approval covers only the very realpath the user was asked about.
 */
export class OutsideGate {
  /** The realpath each asked call was approved for (an ask that is refused never dispatches). */
  private readonly asked = new WeakMap<ToolExecutionToken, string>()

  constructor(private readonly ctx: Context, private readonly toolName: string, private readonly policy: OutsideWorkspace) {}

  listen(): void {
    if (this.policy === 'allow') return
    this.ctx.on('tools/pre-execute', async (exec, next) => {
      if (exec.name !== this.toolName) return next()
      const path = (exec.arguments as { path?: unknown } | null)?.path
      if (typeof path !== 'string' || path.trim() === '' || path.includes('\0')) return next()
      const placed = await place(this.ctx, exec, path).catch(() => undefined)
      if (placed === undefined || placed.inside) return next()
      const reason = outsideReason(this.ctx, path, placed)
      if (this.policy === 'deny') return { kind: 'deny', reason: `${reason} (outsideWorkspace: deny) — list a path inside the workspace` }
      this.asked.set(exec.token, String(placed.target.targetKey))
      return { kind: 'ask', reason }
    })
  }

  /** In the tool body: refuse a target outside the workspace that the policy did not clear. */
  verify(exec: Pick<ToolExecution, 'token'>, path: string, placed: Placed): void {
    if (placed.inside || this.policy === 'allow') return
    if (this.asked.get(exec.token) === String(placed.target.targetKey)) return
    throw new FsError(`${outsideReason(this.ctx, path, placed)}; it changed after the check — list a path inside the workspace`, 'FS_PERMISSION_DENIED')
  }
}

/** Names the argument and where it really leads (a symlink's realpath), for the model and the approval prompt. */
function outsideReason(ctx: Context, path: string, placed: Placed): string {
  const real = ctx.fs.processPath(placed.target)
  return `path ${quoted(path)} is outside the workspace ${placed.root.displayPath}${real === path ? '' : ` (it resolves to ${real})`}`
}
