// tool-kill-shell's config schema, its default guidance, and the checks across keys.
import { HarnessError } from '@deepseek-ai/dsh-llm'
import Schema from '@deepseek-ai/schemastery'

/** Short and name-free (toolName is configurable): schema + guidance must stay within ~150 prompt tokens. */
export const DEFAULT_GUIDANCE = 'Stop background shells you no longer need before you finish.'

export const Config = Schema.object({
  toolName: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('kill_shell')
    .description('The tool name the model calls.'),
  guidance: Schema.string().default(DEFAULT_GUIDANCE).description('Guidance section text; empty registers none.'),
  order: Schema.number().default(1650).description('Prompt order of the guidance section.'),
  maxEntries: Schema.natural().min(1).max(100).default(10)
    .description('Most shell ids listed when a shell_id is not found.'),
  // Also what a bare host job_kill waits while no stopper is attached: tool-bash-bg's kill policy (bareKill), held equal by plugin.spec.ts.
  timeoutMs: Schema.natural().min(1).max(3_600_000).default(5000)
    .description('Default wait (ms) for the group to exit before SIGKILL.'),
  maxTimeoutMs: Schema.natural().min(1).max(3_600_000).default(60_000)
    .description('Largest timeout (ms) a call may ask for.'),
})

export type Config = ReturnType<typeof Config>

/** What the schema cannot say key by key: the default timeout must be one a call may ask for. */
export function checkConfig(config: Config): void {
  if (config.timeoutMs > config.maxTimeoutMs) {
    throw new HarnessError(`invalid tool-kill-shell config: timeoutMs (${config.timeoutMs}) exceeds maxTimeoutMs (${config.maxTimeoutMs}) — lower timeoutMs or raise maxTimeoutMs`, 'INVALID_CONFIG')
  }
}
