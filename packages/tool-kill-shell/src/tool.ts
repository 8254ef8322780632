// The kill_shell tool definition: arguments checked, the stop run, the value rendered.
import type { Context } from '@deepseek-ai/cordis'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { KillSignal } from '@gencode-ai/dsh-tool-bash-bg'
import { blanksAsAbsent, quoted } from '@gencode-ai/dsh-tool-common'
import type { Config } from './config.ts'
import { killShell } from './kill.ts'
import { presentCall, presentResult } from './present.ts'
import { renderKill, renderNotFound } from './render.ts'
import { VALUE_SCHEMA } from './value.ts'

const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGINT'] as const

function invalid(message: string): HarnessError {
  return new HarnessError(message, 'INVALID_ARGS')
}

export function killShellTool(ctx: Context, config: Config): ToolDefinition {
  return blanksAsAbsent(defineTool({
    name: config.toolName,
    description: 'Stop a background shell and its whole process group; reports survivors.',
    parameters: {
      shell_id: { type: 'string', required: true, description: 'Shell id or job id' },
      signal: { type: 'string', enum: SIGNALS, description: 'Default SIGTERM' },
      force: { type: 'boolean', description: 'SIGKILL after timeout; default true' },
      timeout: { type: 'integer', description: `ms before SIGKILL; default ${config.timeoutMs}, max ${config.maxTimeoutMs}` },
    },
    output: {
      schema: VALUE_SCHEMA,
      render: (_args, value) => [{ type: 'text', text: renderKill(value) }],
      presentationMeta: (_args, value) => value,
    },
    async execute(args, exec) {
      const id = args.shell_id.trim()
      if (id.length === 0) {
        throw invalid(`invalid shell_id: expected a shell id like bg-a1b2c3 (or its job id), got ${quoted(args.shell_id)} — use /tasks to list shells`)
      }
      const timeoutMs = args.timeout ?? config.timeoutMs
      if (!(timeoutMs > 0) || timeoutMs > config.maxTimeoutMs) {
        throw invalid(`invalid timeout: expected 1..${config.maxTimeoutMs} ms, got ${JSON.stringify(args.timeout)} — omit it for the default ${config.timeoutMs} ms`)
      }
      const registry = ctx.backgroundShells
      // Ownership is the registry's: another session's shell is refused there (SHELL_FOREIGN).
      const shell = registry.find(id, exec.agent)
      if (shell === undefined) {
        throw new HarnessError(renderNotFound(id, registry.list(exec.agent), config.maxEntries, (known) => registry.liveness(known)), 'SHELL_NOT_FOUND')
      }
      const signal: KillSignal = args.signal ?? 'SIGTERM'
      return killShell(registry, shell, { signal, force: args.force ?? true, timeoutMs }, exec.agent, exec.signal, config.toolName)
    },
    presentCall: (args) => presentCall(args),
    presentResult: (_args, result) => presentResult(result),
  }), ['shell_id'])
}
