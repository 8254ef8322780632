// Another plugin's tool named as configured: each of our tool definitions carries its role, found in the host's registry.
import type { Context } from '@deepseek-ai/cordis'
import type { ToolDefinition, ToolExecution } from '@deepseek-ai/dsh-tools'

/** The tool a message may send the model to. */
export type ToolRole = 'list' | 'read'

/** Shared across the plugins' separate bundles: a registered symbol, not a module's own. */
const ROLE = Symbol.for('@gencode-ai/dsh-tool-common.role')

/** `tool` marked as the plugin serving `role`. */
export function withRole(tool: ToolDefinition, role: ToolRole): ToolDefinition {
  return Object.assign(tool, { [ROLE]: role })
}

/** The name the tool serving `role` has in the caller's view of the registry, else `fallback` (its default name). */
export function toolNamed(ctx: Context, exec: Pick<ToolExecution, 'agent'>, role: ToolRole, fallback: string): string {
  const tools = ctx.get('tools')
  if (tools === undefined) return fallback
  const scope = exec.agent
  const serves = (name: string) => (tools.get(name, scope) as { [ROLE]?: unknown } | undefined)?.[ROLE] === role
  // The default name first: one lookup, not a walk over every tool's schema.
  if (serves(fallback)) return fallback
  return tools.schemas(scope).find(({ name }) => serves(name))?.name ?? fallback
}
