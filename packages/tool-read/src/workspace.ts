/**
 * The workspace of a call, and the outside-workspace policy for a tool's path argument.
 *
 * Identical in tool-list-dir and tool-read (the plugins share no runtime code).
 */

import type { Context } from '@deepseek-ai/cordis'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { PreToolDecision, ToolExecution, ToolExecutionToken } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import type { OutsideWorkspace } from './config.ts'
import { quoted } from './quote.ts'

/**
 * The directory relative paths resolve against: the sandbox policy's workspace root when one is
 * composed, else the calling session's cwd; undefined (the provider's default cwd) otherwise.
 */
function workspaceDir(ctx: Context, exec: Pick<ToolExecution, 'agent'>): string | undefined {
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
 * Resolve a path argument for a call and test realpath containment (ctx.fs targets are symlink
 * resolved: a link inside the workspace that points out of it is outside). tool-bash-bg's
 * private log directory counts as inside when its `backgroundShells` service is composed, so a
 * shell's output_file never asks.
 */
export async function place(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal'>, path: string): Promise<Placement> {
  const dir = workspaceDir(ctx, exec)
  const signal = exec.signal
  const [root, target] = await Promise.all([
    ctx.fs.resolve(dir ?? '.', { signal }),
    ctx.fs.resolve(path, { ...dir === undefined ? {} : { cwd: dir }, signal }),
  ])
  if (ctx.fs.contains(root, target)) return { target, root, inside: true }
  const logDir = (ctx.get('backgroundShells') as { logDir?: unknown } | undefined)?.logDir
  const logs = typeof logDir === 'string' ? await ctx.fs.resolve(logDir, { signal }) : undefined
  return { target, root, inside: logs !== undefined && ctx.fs.contains(logs, target) }
}

/** The tool's path argument as the policy's messages name it. */
export interface PathArgument {
  /** `path`, `file_path`. */
  name: string
  /** What to do instead, e.g. `list a path inside the workspace`. */
  instead: string
}

/**
 * The outside-workspace policy. Before dispatch it is a tools/pre-execute decision for this
 * tool's calls: `ask` goes through the host's approval seam (a denial when no approval service is
 * composed), `deny` refuses; anything it cannot judge (bad arguments, a failing resolve) passes on
 * to the tool, which reports it. The tool body checks again with what it actually uses: a path
 * inside when checked but outside at use (swapped for a symlink in between) is refused, and an
 * approval covers only the very realpath the user was asked about.
 */
export class OutsideGate {
  /** The realpath each asked call was put to the user for (a refused ask never dispatches). */
  private readonly asked = new WeakMap<ToolExecutionToken, string>()

  constructor(
    private readonly ctx: Context,
    private readonly toolName: string,
    private readonly policy: OutsideWorkspace,
    private readonly argument: PathArgument,
  ) {}

  listen(): void {
    if (this.policy === 'allow') return
    this.ctx.on('tools/pre-execute', (exec, next) => this.decide(exec, next))
  }

  private async decide(exec: ToolExecution, next: () => Promise<PreToolDecision>): Promise<PreToolDecision> {
    if (exec.name !== this.toolName) return next()
    const path = (exec.arguments as Record<string, unknown> | null)?.[this.argument.name]
    if (typeof path !== 'string' || path.trim() === '') return next()
    let placement: Placement
    try {
      placement = await place(this.ctx, exec, path)
    } catch {
      return next()
    }
    if (placement.inside) return next()
    const reason = this.reason(path, placement)
    if (this.policy === 'deny') return { kind: 'deny', reason: `${reason} (outsideWorkspace: deny) — ${this.argument.instead}` }
    this.asked.set(exec.token, String(placement.target.targetKey))
    return { kind: 'ask', reason }
  }

  /** The body's check: throws when the path it uses is outside and was not what the user approved. */
  verify(exec: Pick<ToolExecution, 'token'>, path: string, placement: Placement): void {
    if (placement.inside || this.policy === 'allow') return
    if (this.asked.get(exec.token) === String(placement.target.targetKey)) return
    throw new FsError(`${this.reason(path, placement)}; it changed after the check — ${this.argument.instead}`, 'FS_PERMISSION_DENIED')
  }

  private reason(path: string, placement: Placement): string {
    const real = this.ctx.fs.processPath(placement.target)
    const resolves = real === path ? '' : ` (it resolves to ${real})`
    return `${this.argument.name} ${quoted(path)} is outside the workspace ${placement.root.displayPath}${resolves}`
  }
}
