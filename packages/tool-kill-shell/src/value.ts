/** The canonical kill_shell value: its schema, enforced by the tool runtime on every value, and the type inferred from it. */
import type { InferValue } from '@deepseek-ai/dsh-tools'

const integerArray = { type: 'array', items: { type: 'integer' } } as const

export const VALUE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** True only when no process of the shell's group is alive at the end. */
    success: { type: 'boolean', required: true },
    shell_id: { type: 'string', required: true },
    /** How a kill ended; the discriminant the renderers and presenters switch on. */
    outcome: { type: 'string', required: true, enum: ['terminated', 'force-killed', 'survivors', 'already-exited'] },
    /** The first signal sent; 'none' when the shell had already exited. */
    signal_sent: { type: 'string', required: true, enum: ['SIGTERM', 'SIGKILL', 'SIGINT', 'none'] },
    /** True when SIGKILL had to follow the first signal. */
    force_killed: { type: 'boolean', required: true },
    /** The leader's exit code when it exited normally, else null. */
    exit_code: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
    elapsed_ms: { type: 'integer', required: true },
    /** Pids of the group still alive at the end. */
    survivors: { ...integerArray, required: true },
    /** The wait before SIGKILL that applied (ms): a kill already under way (a host job_kill) keeps its own. */
    timeout_ms: { type: 'integer', required: true },
    command: { type: 'string', required: true },
    /** True when this call joined a stop already under way (another call's, a host job_kill's) and sent nothing itself. */
    joined: { type: 'boolean' },
    /** 'Shell already <status>' for an already-exited shell. */
    note: { type: 'string' },
    /** For a shell of another execution world (run through ctx.subprocess): what its one stop cannot promise. */
    world_limits: { type: 'string' },
    /** How this host knew the shell's processes: 'cgroup' (none can leave it) or 'marks' (the group plus environment marks). */
    tracking: { type: 'string', enum: ['cgroup', 'marks'] },
    /** Under 'marks': the kind of process the kill could not have seen. */
    unseen: { type: 'string' },
  },
} as const

export type KillShellValue = InferValue<typeof VALUE_SCHEMA>
