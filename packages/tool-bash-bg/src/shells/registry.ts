/** The `backgroundShells` service: every shell this plugin started, by id, and the one owner of their stops. */
import { randomInt } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { BackgroundShells, Caller, KillRequest, Launch, ShellSnapshot, StopOutcome, StopperOptions } from '../contract.ts'
import type { HostDir } from '../local/host-dir.ts'
import type { ExitTarget } from '../local/host.ts'
import type { HostJobs } from './jobs-adapter.ts'
import { ForegroundRuns } from './foreground-runs.ts'
import { KILL_POLICY } from './kill-policy.ts'
import { liveness } from './liveness.ts'
import { BackgroundShell, type Adopted } from './shell.ts'
import type { Mover, ShellWorld } from './world-types.ts'

/** The crash record is rewritten at most this often, off the launch path (crash cleanup goes by the host mark anyway). */
const SAVE_DELAY_MS = 200
/** What a background shell is started from. */
interface ShellStart {
  command: string
  caller: Caller | undefined
  launch: Launch
  world: ShellWorld
}

export interface RegistryOptions {
  /** The name the shells' markers and errors give. */
  toolName: string
  /** The host directory: the logs, and the crash record kept of the running shells. */
  host: HostDir
  /** The composed host jobs, looked up at each start and stop (ctx.jobs may come and go). */
  jobs: () => HostJobs | undefined
  /** The host's own tool that stops a host job (`job_kill`), when registered. */
  jobKill: () => string | undefined
  /** How long a finished shell stays listed, with its log. */
  keepFinishedMs: number
  maxLogBytes: number
  /** Cap of each host job output read. */
  readLimit: number
}

function notFound(id: string): HarnessError {
  return new HarnessError(`Shell not found: ${id}`, 'SHELL_NOT_FOUND')
}

function visibleTo(shell: BackgroundShell, caller: Caller | undefined): boolean {
  return shell.record.owner === '' || shell.record.owner === (caller?.id ?? '')
}

export class ShellRegistry implements BackgroundShells {
  private readonly shells = new Map<string, BackgroundShell>()
  /** Stop requests handed to the host jobs, for the job's cancel to carry out; never seen outside. */
  private readonly pending = new Map<string, KillRequest>()
  private readonly stoppers: StopperOptions[] = []
  private leftovers = 0
  private saving: NodeJS.Timeout | undefined
  readonly logDir: string
  /** Foreground runs in progress: stopped with the shells. */
  readonly foreground: ForegroundRuns

  constructor(private readonly options: RegistryOptions) {
    this.logDir = options.host.logDir
    this.foreground = new ForegroundRuns(options.toolName)
  }

  /** Said once by /tasks: the shells of dead hosts this host stopped. */
  noteLeftovers(stopped: number): void {
    this.leftovers += stopped
  }

  takeLeftoverNotice(): string | undefined {
    const stopped = this.leftovers
    this.leftovers = 0
    return stopped === 0 ? undefined : `Stopped ${stopped} shell${stopped === 1 ? '' : 's'} left by a host that exited without cleanup`
  }

  attachStopper(options: StopperOptions): () => void {
    const attached = { ...options }
    this.stoppers.push(attached)
    return () => {
      const at = this.stoppers.indexOf(attached)
      if (at >= 0) this.stoppers.splice(at, 1)
    }
  }

  /** The tool that stops `shell` (any shell, when omitted): the attached one, else the host's job_kill for a host job. */
  stopTool(shell?: ShellSnapshot): string | undefined {
    const attached = this.stoppers.at(-1)?.toolName
    return attached !== undefined || (shell !== undefined && shell.job_id === undefined) ? attached : this.options.jobKill()
  }

  /** What a bare cancel (the host's job_kill, plugin dispose) does. */
  defaultKill(): KillRequest {
    return this.stoppers.at(-1)?.defaultKill ?? KILL_POLICY.bareKill
  }

  private live(): BackgroundShell[] {
    return [...this.shells.values()].filter((shell) => shell.running)
  }

  /** What host exit stops: every running shell's processes, and every foreground run's. */
  exitTargets(): ExitTarget[] {
    return [...this.live().map((shell) => shell.processes), ...this.foreground.exitTargets()]
  }

  private saveRunning(): void {
    if (this.saving !== undefined) return
    this.saving = setTimeout(() => {
      this.saving = undefined
      this.options.host.save(this.live().map((shell) => shell.record.id))
    }, SAVE_DELAY_MS).unref()
  }

  private newId(): string {
    for (;;) {
      const id = `bg-${randomInt(36 ** 6).toString(36).padStart(6, '0')}`
      if (!this.shells.has(id)) return id
    }
  }

  /** Drop finished shells past their keep time, with their logs. */
  private prune(): void {
    const cutoff = Date.now() - this.options.keepFinishedMs
    for (const shell of this.shells.values()) {
      const ended = shell.record.ended_at
      if (ended === null || Date.parse(ended) > cutoff) continue
      this.shells.delete(shell.record.id)
      rmSync(shell.record.output_file, { force: true })
    }
  }

  /** A new shell's id and settings, its log directory checked first. */
  private prepare(start: ShellStart) {
    this.prune()
    // Re-created (0700, ours) when something removed it: an agent cleaning /tmp, a tmp cleaner.
    const problem = this.options.host.logDirProblem()
    if (problem !== undefined) throw problem
    const id = this.newId()
    return {
      toolName: this.options.toolName, id, command: start.command, owner: start.caller?.id ?? '', launch: start.launch, world: start.world,
      maxLogBytes: this.options.maxLogBytes, outputFile: join(this.logDir, `${id}.log`),
      cancelRequest: () => this.takePending(id) ?? this.defaultKill(),
      // Host 0.1.7 reads each stream as its own source.
      streams: this.options.jobs()?.line === '0.1.7',
    }
  }

  /** Start one background shell, as a host job when they serve the caller (stops then come by its cancel); throws if none started. */
  start(start: ShellStart): BackgroundShell {
    return this.register(this.prepare(start), start.caller)
  }

  /** Whether the host jobs serve `caller` (false when unknown to be so): a foreground run may then move to the background. */
  jobsServe(caller: Caller): boolean {
    return this.options.jobs()?.serves(caller) ?? false
  }

  /**
   * A foreground run's way to the background: its shell id and log from the start; at the timeout, unless `refuse` says
   * why not, a shell that is also a host job adopts the running command.
   */
  mover(start: ShellStart & { caller: Caller }, refuse: () => string | undefined): Mover {
    const init = this.prepare(start)
    const writer = BackgroundShell.newLog(init)
    return {
      shellId: init.id,
      attach: (started) => {
        writer.attach(started.stdout, 'stdout')
        writer.attach(started.stderr, 'stderr')
      },
      move: (started) => {
        const refused = refuse()
        if (refused !== undefined) return refused
        try {
          this.register(init, start.caller, { started, writer })
          return undefined
        } catch (error) {
          return error instanceof Error ? error.message : String(error)
        }
      },
      discard: () => {
        writer.close()
        rmSync(init.outputFile, { force: true })
      },
    }
  }

  /** `adopted`: a moved foreground run, only ever as a host job (its end must be told). */
  private register(init: ReturnType<ShellRegistry['prepare']>, caller: Caller | undefined, adopted?: Adopted): BackgroundShell {
    let shell: BackgroundShell | undefined
    const jobs = this.options.jobs()
    if (adopted !== undefined && (jobs === undefined || caller === undefined)) throw new HarnessError('no job controller serves this call', 'NO_JOBS')
    if (jobs !== undefined && caller !== undefined) {
      try {
        const jobId = jobs.start({
          label: init.command, owner: caller,
          run: () => {
            shell = new BackgroundShell(init, adopted)
            return shell.hooks(this.options.readLimit)
          },
        })
        if (shell !== undefined) shell.record.job_id = jobId
      } catch (error) {
        // No controller serves this agent: the shell runs on the registry alone. Anything else is the host's refusal.
        if (adopted !== undefined || shell !== undefined || !/no job controller/.test(String(error))) throw error
      }
    }
    shell ??= new BackgroundShell(init)
    const id = init.id
    this.shells.set(id, shell)
    this.saveRunning()
    void shell.settled.then(() => this.saveRunning())
    return shell
  }

  private takePending(id: string): KillRequest | undefined {
    const request = this.pending.get(id)
    this.pending.delete(id)
    return request
  }

  private entry(idOrJobId: string): BackgroundShell | undefined {
    const direct = this.shells.get(idOrJobId)
    if (direct !== undefined) return direct
    for (const shell of this.shells.values()) if (shell.record.job_id === idOrJobId) return shell
    return undefined
  }

  private owned(idOrJobId: string, caller: Caller | undefined): BackgroundShell | undefined {
    const shell = this.entry(idOrJobId)
    if (shell !== undefined && !visibleTo(shell, caller)) {
      // The same fence, and nearly the same words, as the host's job_kill.
      throw new HarnessError(`shell ${shell.record.id} belongs to another session — only the session that started it can stop it`, 'SHELL_FOREIGN')
    }
    return shell
  }

  find(idOrJobId: string, caller: Caller | undefined): ShellSnapshot | undefined {
    return this.owned(idOrJobId, caller)?.snapshot()
  }

  list(caller: Caller | undefined): ShellSnapshot[] {
    this.prune()
    return [...this.shells.values()].filter((shell) => visibleTo(shell, caller)).map((shell) => shell.snapshot())
  }

  /** Running shells of one owner session (every owner's when omitted). */
  running(owner?: string): ShellSnapshot[] {
    return this.live().filter((shell) => owner === undefined || shell.record.owner === owner).map((shell) => shell.snapshot())
  }

  liveness(shell: ShellSnapshot): string {
    return liveness(shell, Date.now())
  }

  settled(id: string): Promise<ShellSnapshot> {
    const shell = this.shells.get(id)
    return shell === undefined ? Promise.reject(notFound(id)) : shell.settled
  }

  async stop(id: string, request: KillRequest, caller: Caller | undefined): Promise<StopOutcome> {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    const shell = this.owned(id, caller)
    if (shell === undefined) throw notFound(id)
    // Nothing was sent, so nothing was waited for: 0, not the time this call took to learn it.
    const exited = async (): Promise<StopOutcome> => ({
      outcome: 'already-exited', signal_sent: 'none', force_killed: false, exit_code: shell.record.exit_code,
      elapsed_ms: 0, timeout_ms: request.timeoutMs, survivors: [], shell: await shell.settled,
    })
    if (!shell.running) return exited()
    // Judged before the host job's cancel can start a kill: one call claims a stop, any other made meanwhile joins it.
    const joined = shell.joins(request)
    const jobId = shell.record.job_id
    const jobs = jobId === undefined ? undefined : this.options.jobs()
    if (jobId !== undefined && jobs !== undefined) {
      // Through the host, so it records the kill (stopping, no completion notice later); its cancel takes this request.
      this.pending.set(shell.record.id, request)
      let answer: 'requested' | 'already-finished'
      try {
        answer = jobs.kill(jobId, caller, `${this.stoppers.at(-1)?.toolName ?? 'stop'} ${request.signal}`)
      } finally {
        // A request the cancel never took (kill threw, or the job had finished) must not wait for a later bare job_kill.
        if (this.pending.get(shell.record.id) === request) this.pending.delete(shell.record.id)
      }
      if (answer === 'already-finished') return exited()
    }
    // The kill the cancel started is under way: this joins it (a request asking for more runs after it).
    const outcome = await shell.terminate(request)
    if (outcome.signal_sent === 'none') return exited()
    const snapshot = outcome.survivors.length === 0 ? await shell.settled : shell.snapshot()
    return {
      ...outcome,
      outcome: outcome.survivors.length > 0 ? 'survivors' : outcome.force_killed ? 'force-killed' : 'terminated',
      exit_code: snapshot.exit_code ?? outcome.exit_code,
      elapsed_ms: elapsed(),
      shell: snapshot,
      ...joined ? { joined: true as const } : {},
    }
  }

  /** Plugin dispose: the shells (a kill under way included: this one runs beside it) and the foreground runs. */
  async terminateAll(): Promise<void> {
    const request = this.defaultKill()
    await Promise.all([this.foreground.stopAll(), ...this.live().map((shell) => shell.terminate(request, true))])
  }
}
