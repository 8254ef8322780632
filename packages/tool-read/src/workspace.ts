/**
 * The workspace of a call and whether a target lies inside it. Same semantics as
 * tool-list-dir's workspace policy (each package keeps its own copy: no shared runtime code).
 */

import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { ToolExecution, ToolExecutionToken } from '@deepseek-ai/dsh-tools'
import type { PreToolDecision } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type { OutsideWorkspace } from './config.ts'
import { quoted } from './quote.ts'

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
 * The outside-workspace policy. Before dispatch it is a tools/pre-execute decision for our
 * tool's calls: `ask` goes through the host's approval seam (the host turns it into a denial
 * when no approval service is composed), `deny` refuses. Anything it cannot judge (bad
 * arguments, a failing resolve) passes on to execute, which reports it. The tool body checks
 * again with the file it actually opens: a path that was inside when checked but resolves
 * outside at use (swapped for a symlink in between) is refused, and an approval covers only the
 * very realpath the user was asked about.
 */
export class OutsideGate {
  /** The realpath each asked call was put to the user for (a refused ask never dispatches). */
  private readonly asked = new WeakMap<ToolExecutionToken, string>()

  constructor(private readonly ctx: Context, private readonly toolName: string, private readonly policy: OutsideWorkspace) {}

  listen(): void {
    if (this.policy === 'allow') return
    this.ctx.on('tools/pre-execute', (exec, next) => this.decide(exec, next))
  }

  private async decide(exec: ToolExecution, next: () => Promise<PreToolDecision>): Promise<PreToolDecision> {
    if (exec.name !== this.toolName) return next()
    const filePath = (exec.arguments as { file_path?: unknown } | null)?.file_path
    if (typeof filePath !== 'string' || filePath.trim() === '') return next()
    let placement: Placement
    try {
      placement = await place(this.ctx, exec, filePath)
    } catch {
      return next()
    }
    if (placement.inside) return next()
    const reason = outsideReason(this.ctx, filePath, placement)
    if (this.policy === 'deny') return { kind: 'deny', reason: `${reason} (outsideWorkspace: deny) — read a file inside the workspace` }
    this.asked.set(exec.token, String(placement.target.targetKey))
    return { kind: 'ask', reason }
  }

  /** In the tool body: refuse a target outside the workspace that the policy did not clear. */
  verify(exec: Pick<ToolExecution, 'token'>, filePath: string, placement: Placement): void {
    if (placement.inside || this.policy === 'allow') return
    if (this.asked.get(exec.token) === String(placement.target.targetKey)) return
    throw new FsError(
      `${outsideReason(this.ctx, filePath, placement)}; it changed after the check — read a file inside the workspace`,
      'FS_PERMISSION_DENIED',
    )
  }
}

/** Names the argument and where it really leads (a symlink's realpath), for the model and the approval prompt. */
function outsideReason(ctx: Context, filePath: string, placement: Placement): string {
  const real = ctx.fs.processPath(placement.target)
  return `file_path ${quoted(filePath)} is outside the workspace ${placement.root.displayPath}${real === filePath ? '' : ` (it resolves to ${real})`}`
}
