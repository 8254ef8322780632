// tool-bash-bg's config schema, its default guidance, and the checks across keys.
import z from '@deepseek-ai/schemastery'
import { HarnessError } from '@deepseek-ai/dsh-llm'

/** The default guidance's last sentence with keepOnExit: shells outlive the host and are taken back on resume. */
const EXIT_SENTENCE = 'Shells still running when the host exits are killed.'
const KEPT_SENTENCE = 'Shells keep running when the host exits and are taken back when the session resumes.'

export const DEFAULT_GUIDANCE = 'Start servers, watchers and long jobs with run_in_background: true; '
  + 'to wait until a server is ready, add wait_for with a regex for its ready line instead of sleeping or polling; '
  + 'to hear of errors while you work, add watch (e.g. "ERROR|panic") instead of polling the log. '
  + `Read new output with job_output; stop a shell with kill_shell. ${EXIT_SENTENCE}`

/** The guidance the prompt gets: the default says what keepOnExit does; a configured text is the user's. */
export function guidanceOf(config: { guidance: string, keepOnExit: boolean }): string {
  const kept = config.keepOnExit && config.guidance === DEFAULT_GUIDANCE
  return kept ? DEFAULT_GUIDANCE.replace(EXIT_SENTENCE, KEPT_SENTENCE) : config.guidance
}

const positiveInt = (value: number) => z.natural().min(1).default(value)

/** Every default lives here. */
export const Config = z.object({
  toolName: z.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('bash_bg')
    .description('The tool name the model calls.'),
  guidance: z.string().default(DEFAULT_GUIDANCE).description("Prompt section text; '' = none."),
  order: z.number().default(1550).description('Prompt section order.'),
  maxEntries: positiveInt(10).description('Most running shells per owner session.'),
  timeoutMs: positiveInt(120_000).description('Default foreground timeout (ms).'),
  waitTimeoutMs: positiveInt(30_000).description('Default wait_for wait (ms).'),
  maxTimeoutMs: positiveInt(600_000).description('Largest foreground timeout or wait_for wait a call may ask for (ms).'),
  onTimeout: z.union(['background', 'kill'] as const).default('background')
    .description("A foreground command at its timeout: 'background' keeps it running as a background shell where a jobs controller serves the call; 'kill' stops it."),
  maxOutputBytes: positiveInt(64_000).description('Foreground output kept per stream (bytes).'),
  maxLogBytes: positiveInt(64 * 1024 * 1024).description('Background log cap (bytes).'),
  keepFinishedMs: positiveInt(3_600_000).description('How long a finished background shell stays listed, with its log (ms).'),
  keepOnExit: z.boolean().default(false).description('Background shells keep running after the host exits (for at most orphanTtlMs).'),
  orphanTtlMs: positiveInt(1_800_000).description('The longest a background shell runs with no host of its session, counted from the host\'s exit or crash (ms).'),
})

export type Config = ReturnType<typeof Config>

/** What the schema cannot express: the default foreground timeout and wait must fit under the maximum. */
export function checkConfig(config: Config): void {
  for (const key of ['waitTimeoutMs', 'timeoutMs'] as const) {
    if (config[key] > config.maxTimeoutMs) {
      throw new HarnessError(`tool-bash-bg: ${key} (${config[key]}) exceeds maxTimeoutMs (${config.maxTimeoutMs}) — raise maxTimeoutMs or lower ${key}`, 'INVALID_CONFIG')
    }
  }
}
