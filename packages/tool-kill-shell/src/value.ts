import type { KillSignal } from '@gencode-ai/dsh-tool-bash-bg'

/** How a kill ended; the discriminant the renderers and presenters switch on. */
type KillShellOutcome = 'terminated' | 'force-killed' | 'survivors' | 'already-exited'

/** The canonical value of one kill_shell call. */
export interface KillShellValue {
  /** True only when no process of the shell's group is alive at the end. */
  success: boolean
  shell_id: string
  outcome: KillShellOutcome
  /** The first signal sent; 'none' when the shell had already exited. */
  signal_sent: KillSignal | 'none'
  /** True when SIGKILL had to follow the first signal. */
  force_killed: boolean
  /** The leader's exit code when it exited normally, else null. */
  exit_code: number | null
  elapsed_ms: number
  /** Pids of the group still alive at the end. */
  survivors: number[]
  /** The wait before SIGKILL that applied (ms): a kill already under way (a host job_kill) keeps its own. */
  timeout_ms: number
  command: string
  /** 'Shell already <status>' for an already-exited shell. */
  note?: string
  /** For a shell of another execution world (run through ctx.subprocess): what its one stop cannot promise. */
  world_limits?: string
  /** How this host knew the shell's processes: 'cgroup' (none can leave it) or 'marks' (the group plus environment marks). */
  tracking?: 'cgroup' | 'marks'
  /** Under 'marks': the kind of process the kill could not have seen. */
  unseen?: string
}

const integerArray = { type: 'array', items: { type: 'integer' } } as const

/** The output schema enforced by the tool runtime on every value. */
export const VALUE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', required: true },
    shell_id: { type: 'string', required: true },
    outcome: { type: 'string', required: true, enum: ['terminated', 'force-killed', 'survivors', 'already-exited'] },
    signal_sent: { type: 'string', required: true, enum: ['SIGTERM', 'SIGKILL', 'SIGINT', 'none'] },
    force_killed: { type: 'boolean', required: true },
    exit_code: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
    elapsed_ms: { type: 'integer', required: true },
    survivors: { ...integerArray, required: true },
    timeout_ms: { type: 'integer', required: true },
    command: { type: 'string', required: true },
    note: { type: 'string' },
    world_limits: { type: 'string' },
    tracking: { type: 'string', enum: ['cgroup', 'marks'] },
    unseen: { type: 'string' },
  },
} as const
