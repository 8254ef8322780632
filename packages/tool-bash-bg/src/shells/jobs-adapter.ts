// The host job registry (ctx.jobs) as bash_bg uses it, one adapter per host line chosen by shape: rc.8 takes the
// agent as owner and caller and pulls output through `readOutput`; 0.1.7 takes the session id as owner and caller
// and pumps `output: [{ read(fromByte) }]` sources itself (and reports `result`, which a stream job leaves unset).
import type { Caller } from '../contract.ts'

/** A job's end as the host shows it (rc.8 and 0.1.7 agree; neither `output` nor `result` is set by a stream job). */
export interface ShellJobOutcome {
  status: 'completed' | 'killed' | 'failed'
  detail?: string
}

/** One read of a job's output from a byte offset (0.1.7's JobSourceRead). */
export interface OutputRead {
  text: string
  nextOffset: number
  lossy: boolean
  spillPath?: string
}

/** What a shell gives the host for its job. */
export interface ShellJobHooks {
  // Properties, not methods: the shell hands out closures the host calls unbound.
  cancel: (reason?: string) => void
  done: Promise<ShellJobOutcome>
  /** New output since the last call, bounded (rc.8's consuming cursor). */
  readOutput: () => string
  /** One stream's output from `fromByte` (its own offset), not consuming (0.1.7's pull sources). */
  readFrom: (fromByte: number, stream: 'stdout' | 'stderr') => OutputRead
}

interface ShellJobStart {
  label: string
  owner: Caller
  /** Called once, synchronously, by the host after its preflight; a throw leaves nothing registered. */
  run(): ShellJobHooks
}

export interface HostJobs {
  readonly line: 'rc.8' | '0.1.7'
  /** The job id; throws the host's refusal (`no job controller serves this agent`, a limit). */
  start(job: ShellJobStart): string
  /** Whether a job controller serves `owner` (a start would not be refused for want of one); true when the host cannot say. */
  serves(owner: Caller): boolean
  /** Ask the host to cancel the job (its `cancel` runs inside); throws for an unknown or foreign job. */
  kill(jobId: string, caller: Caller | undefined, reason: string): 'requested' | 'already-finished'
  /**
   * Called just before the job's `done` settles: a wait pending across the settlement marks it reported (rc.8) or
   * awaited (0.1.7), so tool-jobs sends no notice of its own; this plugin tells the model itself, exactly once.
   */
  hold(jobId: string, caller: Caller): void
}

/** The hold's wait: it ends at the settlement, a moment later; the bound only keeps a stuck one from lasting. */
const HOLD_MS = 60_000

type Answer = 'requested' | 'already-finished'

/** rc.8 (`@deepseek-ai/dsh-jobs` 0.1.0-rc.8, lib/types/types.d.ts: JobStart, JobHooks). */
interface Rc8Jobs {
  /** Not in the declared contract (the registry's own check before a start): looked for, not relied on. */
  servesOwner?(owner: Caller): boolean
  start(spec: { kind: 'bash_bg', label: string, owner?: Caller, run(): { cancel(reason?: string): void, done: Promise<ShellJobOutcome>, readOutput?(): string } }): string
  kill(id: string, caller?: Caller, reason?: string): Answer
  wait?(id: string, timeoutMs: number, caller?: Caller): Promise<unknown>
}

/** 0.1.7 (packages/jobs/jobs/src/types.ts: JobSpec, JobOutputSource, JobHooks; index.ts: kill(id, caller?: SessionId)). */
interface NextJobs {
  start(spec: {
    kind: 'bash_bg'
    label: string
    owner?: string
    output?: readonly { channel: 'stdout' | 'stderr', read(fromByte: number): OutputRead }[]
    run(job: unknown): { cancel(reason?: string): void, done: Promise<ShellJobOutcome> }
  }): string
  kill(id: string, caller?: string, reason?: string): Answer
  readAt(id: string, from: number, caller?: string): unknown
  wait?(id: string, timeoutMs: number, caller?: string): Promise<unknown>
}

/** A wait's own end (the settlement, or an error of a registry that lacks one) is nothing to act on. */
const held = (wait: Promise<unknown> | undefined) => { void wait?.catch(() => {}) }

/** 0.1.7 reads output at offsets (`readAt`), which rc.8 lacks: the one method that tells the lines apart. */
function isNext(jobs: object): jobs is NextJobs {
  return typeof (jobs as Partial<NextJobs>).readAt === 'function'
}

function rc8(jobs: Rc8Jobs): HostJobs {
  return {
    line: 'rc.8',
    start: (job) => jobs.start({
      kind: 'bash_bg', label: job.label, owner: job.owner,
      run: () => {
        const { cancel, done, readOutput } = job.run()
        return { cancel, done, readOutput }
      },
    }),
    serves: (owner) => typeof jobs.servesOwner === 'function' ? jobs.servesOwner(owner) : true,
    kill: (jobId, caller, reason) => jobs.kill(jobId, caller, reason),
    hold: (jobId, caller) => held(jobs.wait?.(jobId, HOLD_MS, caller)),
  }
}

function next(jobs: NextJobs): HostJobs {
  return {
    line: '0.1.7',
    start(job) {
      // The host pumps its sources as soon as the job is registered, which is after `run` returned.
      // One source per stream, so the host tags stderr itself.
      let hooks: ShellJobHooks | undefined
      const source = (channel: 'stdout' | 'stderr') => ({
        channel, read: (fromByte: number) => hooks?.readFrom(fromByte, channel) ?? { text: '', nextOffset: fromByte, lossy: false },
      })
      return jobs.start({
        kind: 'bash_bg', label: job.label, owner: job.owner.id, output: [source('stdout'), source('stderr')],
        run: () => {
          hooks = job.run()
          return { cancel: hooks.cancel, done: hooks.done }
        },
      })
    },
    // Nothing on this line says it before a start: a refused move is said at the timeout.
    serves: () => true,
    kill: (jobId, caller, reason) => jobs.kill(jobId, caller?.id, reason),
    hold: (jobId, caller) => held(jobs.wait?.(jobId, HOLD_MS, caller.id)),
  }
}

/** The adapter for the composed ctx.jobs, or undefined without one. */
export function hostJobsOf(jobs: object | undefined): HostJobs | undefined {
  if (jobs === undefined) return undefined
  return isNext(jobs) ? next(jobs) : rc8(jobs as unknown as Rc8Jobs)
}
