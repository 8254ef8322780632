// The outside-workspace gate for a tool's path argument: realpath containment, and the ask/allow/deny policy.
import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { FsError, type FsTarget } from '@deepseek-ai/dsh-fs'
import type { PreToolDecision, ToolExecution, ToolExecutionToken } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-sandbox-policy'
import { echo, shownPath } from './escape.ts'

/** The config key, the same in every plugin that takes a path. */
export const OutsideWorkspace = Schema.union(['ask', 'allow', 'deny'] as const).default('ask')
  .description('Paths outside the workspace: ask for approval, allow, or deny.')
type OutsideWorkspace = ReturnType<typeof OutsideWorkspace>

/** Where relative paths resolve: the sandbox policy's workspace root, else the session's cwd. */
function workspaceDir(ctx: Context, exec: Pick<ToolExecution, 'agent'>): string | undefined {
  const policy = ctx.get('sandboxPolicy')
  if (policy !== undefined) return policy.resolve(exec.agent ? { session: exec.agent.session } : {}).workspaceRoot
  return exec.agent?.session.header.cwd
}

export interface Placement {
  target: FsTarget
  root: FsTarget
  inside: boolean
}

/**
 * Where bash_bg's shells log (its `backgroundShells` contract's `logDir`), read by each plugin through that declared
 * contract; undefined when bash_bg is not composed.
 */
export type LogDirOf = () => string | undefined

/**
 * Resolve a path argument and test realpath containment (a link out of the workspace is outside).
 * bash_bg's log directory counts as inside, so reading a shell's output_file never asks.
 */
export async function place(ctx: Context, exec: Pick<ToolExecution, 'agent' | 'signal'>, path: string, logDirOf?: LogDirOf): Promise<Placement> {
  const dir = workspaceDir(ctx, exec)
  const signal = exec.signal
  const [root, target] = await Promise.all([
    ctx.fs.resolve(dir ?? '.', { signal }),
    ctx.fs.resolve(path, { ...dir === undefined ? {} : { cwd: dir }, signal }),
  ])
  if (ctx.fs.contains(root, target)) return { target, root, inside: true }
  const logDir = logDirOf?.()
  const logs = logDir === undefined ? undefined : await ctx.fs.resolve(logDir, { signal })
  return { target, root, inside: logs !== undefined && ctx.fs.contains(logs, target) }
}

/** The path argument as messages name it, and what to do instead (`list a path inside the workspace`). */
export interface PathArgument {
  name: string
  instead: string
}

/**
 * Before dispatch, a tools/pre-execute decision: `ask` goes through the host's approval seam,
 * `deny` refuses, what it cannot judge passes on to the tool. The body checks again with what it
 * uses: a path swapped for a symlink after the check is refused, and an approval covers only the
 * realpath the user was asked about.
 */
export class OutsideGate {
  /** The realpath each asked call was put to the user for. */
  private readonly asked = new WeakMap<ToolExecutionToken, string>()

  constructor(
    private readonly ctx: Context,
    private readonly toolName: string,
    private readonly policy: OutsideWorkspace,
    private readonly argument: PathArgument,
    /** bash_bg's log directory, inside for this tool (when bash_bg is composed). */
    readonly logDir?: LogDirOf,
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
      placement = await place(this.ctx, exec, path, this.logDir)
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
    // Escaped: a link's target is any text its maker chose, and must not forge a line.
    const resolves = real === path ? '' : ` (it resolves to ${shownPath(real)})`
    return `${this.argument.name} ${echo(path)} is outside the workspace ${shownPath(placement.root.displayPath)}${resolves}`
  }
}
