import z from '@deepseek-ai/schemastery'
import { HarnessError } from '@deepseek-ai/dsh-llm'

/** Configuration of the tool-bash-bg plugin. Every default lives in the schema below. */
export interface Config {
  /** The tool's name (rename it `bash` only when dsh-tool-bash is disabled). */
  toolName: string
  /** The prompt section `tool:<toolName>`; '' registers none. */
  guidance: string
  /** The prompt section's order. */
  order: number
  /** The most shells one owner session may have running at once. */
  maxEntries: number
  /** Foreground timeout when the call names none (ms). */
  timeoutMs: number
  /** How long wait_for waits when the call names no timeout (ms). */
  waitTimeoutMs: number
  /** The largest foreground timeout or wait_for wait a call may ask for (ms). */
  maxTimeoutMs: number
  /** Foreground output kept per stream (bytes); the rest is cut with a marker. */
  maxOutputBytes: number
  /** A background shell's log stops growing at this size (bytes). */
  maxLogBytes: number
}

export const DEFAULT_GUIDANCE = 'Start servers, watchers and long jobs with run_in_background: true; '
  + 'to wait until a server is ready, add wait_for with a regex for its ready line instead of sleeping or polling. '
  + 'The result gives a shell_id and an output_file: read the file for output; '
  + 'stop the shell with kill_shell. Shells still running when the host exits are killed.'

const positiveInt = (value: number) => z.natural().min(1).default(value)

export const Config: z<Partial<Config>, Config> = z.object({
  toolName: z.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('bash_bg')
    .description('The tool name the model calls.'),
  guidance: z.string().default(DEFAULT_GUIDANCE).description("Prompt section text; '' = none."),
  order: z.number().default(1550).description('Prompt section order.'),
  maxEntries: positiveInt(10).description('Most running shells per owner session.'),
  timeoutMs: positiveInt(120_000).description('Default foreground timeout (ms).'),
  waitTimeoutMs: positiveInt(30_000).description('Default wait_for wait (ms).'),
  maxTimeoutMs: positiveInt(600_000).description('Largest foreground timeout or wait_for wait a call may ask for (ms).'),
  maxOutputBytes: positiveInt(64_000).description('Foreground output kept per stream (bytes).'),
  maxLogBytes: positiveInt(64 * 1024 * 1024).description('Background log cap (bytes).'),
}) as z<Partial<Config>, Config>

/** What the schema cannot express: the default foreground timeout and wait must fit under the maximum. */
export function checkConfig(config: Config): void {
  if (config.waitTimeoutMs > config.maxTimeoutMs) {
    throw new HarnessError(`tool-bash-bg: waitTimeoutMs (${config.waitTimeoutMs}) exceeds maxTimeoutMs (${config.maxTimeoutMs}) — raise maxTimeoutMs or lower waitTimeoutMs`, 'INVALID_CONFIG')
  }
  if (config.timeoutMs > config.maxTimeoutMs) {
    throw new HarnessError(`tool-bash-bg: timeoutMs (${config.timeoutMs}) exceeds maxTimeoutMs (${config.maxTimeoutMs}) — raise maxTimeoutMs or lower timeoutMs`, 'INVALID_CONFIG')
  }
}
