/** The `backgroundShells` service: every shell this plugin started, by id, and the one owner of their stops. */
import { randomInt } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { BackgroundShells, Caller, KillRequest, Launch, ShellSnapshot, StopOutcome, StopperOptions } from '../contract.ts'
import type { HostDir } from '../local/host-dir.ts'
import type { AtExit } from '../local/host.ts'
import { exitFileOf, type Ledger, type LedgerPatch, type LedgerRecord } from '../local/ledger.ts'
import type { HostJobs } from './jobs-adapter.ts'
import type { StopCause } from './completions.ts'
import { ForegroundRuns } from './foreground-runs.ts'
import { KILL_POLICY } from './kill-policy.ts'
import { liveness } from './liveness.ts'
import { BackgroundShell, type ShellInit } from './shell.ts'
import type { Mover, ShellWorld, StartedShell } from './world-types.ts'
import { hostLog, hostWritten } from './written-here.ts'

/** The crash record is rewritten at most this often, off the launch path (crash cleanup goes by the host mark anyway). */
const SAVE_DELAY_MS = 200
/** What a background shell is started from. */
interface ShellStart {
  command: string
  caller: Caller | undefined
  launch: Launch
  world: ShellWorld
}

/** A shell about to start: its settings, its files, and the shell once made (its completion hold looks it up). */
interface Prepared {
  init: ShellInit
  files: ReturnType<typeof BackgroundShell.files>
  made: { shell?: BackgroundShell }
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
  /** Shells keep running past the host's exit (for at most orphanTtlMs, their keeper's guard). */
  keepOnExit: boolean
  orphanTtlMs: number
  /** The durable ledger of each owned local shell. */
  ledger: Ledger
  /**
   * The host lets its kept shells go (keepOnExit, at its exit or dispose): it records none of their ends from now, so
   * their keeper is told at once that it does (an end heard meanwhile would be recorded by nobody).
   */
  lettingGo?: () => void
  /** A shell of an owner session started: this host serves that session's shells from now on. */
  started?: (owner: string) => void
  /** A shell settled (with who stopped it, if anything did): its completion is told by this plugin, not by tool-jobs. */
  completed?: (shell: ShellSnapshot, cause: StopCause | undefined) => void
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
  private readonly takeBacks = new Map<string, Promise<void>>()
  private readonly takenBackListeners = new Set<(shell: BackgroundShell, watch: LedgerRecord['watch'], agent: Caller) => void>()
  private leftovers = 0
  private saving: NodeJS.Timeout | undefined
  /** Shells being started (an await on the keeper), by id, with their owner: they count against maxEntries. */
  private readonly starting = new Map<string, string>()
  /** Set once the host is going: shells that end now were stopped by the exit, and say so in the ledger. */
  private exiting: 'stopped-at-exit' | 'kept' | undefined
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

  /** Shells of `owner` being started now (counted with the running ones against maxEntries). */
  startingFor(owner: string): number {
    return [...this.starting.values()].filter((each) => each === owner).length
  }

  /**
   * Host exit, without yielding: every foreground run stops; running shells stop too (the ledger says
   * stopped-at-exit), or with keepOnExit keep running (the ledger notes the host's exit) and keep their files.
   */
  atExit(): AtExit {
    const live = this.live()
    const targets = this.foreground.exitTargets()
    if (!this.options.keepOnExit) {
      this.exiting = 'stopped-at-exit'
      for (const shell of live) this.note(shell, { state: 'stopped-at-exit', endedAt: Date.now() })
      return { targets: [...live.map((shell) => shell.processes), ...targets], keep: new Set() }
    }
    // Only a shell its keeper holds can outlive the host: a moved foreground run's output passes through it.
    const kept = live.filter((shell) => shell.facts?.keeper !== undefined)
    const stopped = live.filter((shell) => shell.facts?.keeper === undefined)
    return { targets: [...stopped.map((shell) => shell.processes), ...targets], keep: this.keepAll(kept) }
  }

  /** keepOnExit at a dispose or an exit: each running shell let go under its keeper; the file names it keeps. */
  private keepAll(live: readonly BackgroundShell[]): Set<string> {
    this.exiting = 'kept'
    const now = Date.now()
    const keep = new Set<string>()
    for (const shell of live) {
      shell.letGoAtExit()
      this.note(shell, { hostExitedAt: now })
      for (const suffix of ['.log', '.streams']) keep.add(`${shell.record.id}${suffix}`)
    }
    this.options.lettingGo?.()
    return keep
  }

  /** Plugin dispose with keepOnExit: foreground runs stop, shells are let go; the file names to keep. */
  async keepAtDispose(): Promise<Set<string>> {
    const live = this.live()
    const keep = this.keepAll(live.filter((shell) => shell.facts?.keeper !== undefined))
    await Promise.all([
      this.foreground.stopAll(),
      ...live.filter((shell) => shell.facts?.keeper === undefined)
        .map((shell) => shell.terminate(this.defaultKill(), true).catch(() => {})),
    ])
    return keep
  }

  /** A shell's watch changed (armed, a notice told, ended): its record follows, so a restarted host re-arms it. */
  noteWatch(shell: BackgroundShell): void {
    this.note(shell, { watch: shell.watching })
  }

  /** Told of each shell taken back at resume, with its record (a watch to re-arm) and the agent that took it. */
  onTakenBack(listener: (shell: BackgroundShell, watch: LedgerRecord['watch'], agent: Caller) => void): void {
    this.takenBackListeners.add(listener)
  }

  /** Change a shell's ledger record; a ledger that cannot be written never fails a shell. */
  private note(shell: BackgroundShell, patch: LedgerPatch): void {
    const owner = shell.record.owner
    if (owner === '' || shell.facts === undefined) return
    try {
      this.options.ledger.update(owner, shell.record.id, patch)
    } catch {}
  }

  /** Its record from the start: every owned local shell has one. */
  private enter(shell: BackgroundShell, files: ReturnType<typeof BackgroundShell.files>): void {
    const { record, facts } = shell
    if (record.owner === '' || facts === undefined || files.ledger === undefined) return
    const entry: LedgerRecord = {
      v: 1, shellId: record.id, ...record.job_id === undefined ? {} : { jobId: record.job_id }, session: record.owner,
      command: record.command, cwd: record.cwd, pid: record.pid, pidStart: facts.pidStart, pidns: facts.pidns,
      ...facts.cgroup === undefined ? {} : { cgroup: facts.cgroup },
      log: files.log, streams: files.streams, exitFile: files.exitFile, ...facts.keeper === undefined ? {} : { keeper: facts.keeper },
      startedAt: Date.parse(record.started_at), state: 'running', keep: this.options.keepOnExit, ttlMs: files.ttlMs,
      ...shell.watching === undefined ? {} : { watch: shell.watching },
    }
    try {
      this.options.ledger.write(entry)
    } catch {}
  }

  /**
   * Its end, as this host saw it (unless the host let it go: then its keeper writes it). A shell the model stopped is
   * not recorded: its record goes once its end is judged (Completions), and a kill_shell waits for no fsync.
   */
  private ended(shell: BackgroundShell, snapshot: ShellSnapshot): void {
    if (this.exiting === 'kept' || shell.stopCause === 'model') return
    const state = this.exiting ?? (snapshot.status === 'killed' ? 'killed' : 'ended')
    const endedAt = snapshot.ended_at === null ? Date.now() : Date.parse(snapshot.ended_at)
    this.note(shell, { state, endedAt, exitCode: snapshot.exit_code, signal: snapshot.signal })
  }

  private saveRunning(): void {
    if (this.saving !== undefined) return
    this.saving = setTimeout(() => {
      this.saving = undefined
      const live = this.live()
      // A crashed host's owned local shells are its keeper's to keep for their session; the rest the next host reaps.
      const kept = live.filter((shell) => shell.record.owner !== '' && shell.facts !== undefined)
      this.options.host.save(live.map((shell) => shell.record.id), kept.map((shell) => shell.record.id))
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
      const base = shell.record.output_file.replace(/\.log$/, '')
      for (const file of [shell.record.output_file, `${base}.streams`]) rmSync(file, { force: true })
    }
  }

  /** Where an owned local shell's exit file and record go: its session's ledger directory, when that is usable. */
  private ledgerOf(owner: string, world: ShellWorld): { root: string, session: string } | undefined {
    if (owner === '' || world.limits !== undefined || this.options.ledger.problem(owner) !== undefined) return undefined
    return { root: this.options.ledger.root, session: owner }
  }

  /** A new shell's id and settings, its log directory checked first; `kept`: its keeper may keep it past the host (no moved run). */
  private prepare(start: ShellStart, kept = true): Prepared {
    this.prune()
    // Re-created (0700, ours) when something removed it: an agent cleaning /tmp, a tmp cleaner.
    const problem = this.options.host.logDirProblem()
    if (problem !== undefined) throw problem
    const id = this.newId()
    const owner = start.caller?.id ?? ''
    const ledger = kept ? this.ledgerOf(owner, start.world) : undefined
    const made: Prepared['made'] = {}
    const init: ShellInit = {
      toolName: this.options.toolName, id, command: start.command, owner, launch: start.launch, world: start.world,
      maxLogBytes: this.options.maxLogBytes, outputFile: join(this.logDir, `${id}.log`),
      cancelRequest: () => this.takePending(id) ?? this.defaultKill(),
      files: {
        streams: join(this.logDir, `${id}.streams`), ttlMs: this.options.orphanTtlMs,
        // Only a shell a session may take back needs its end kept (and none is written into the host directory).
        exitFile: ledger === undefined ? '' : exitFileOf(this.options.ledger.dirOf(owner), id),
        ...ledger === undefined ? {} : { ledger },
      },
      keepOnTeardown: kept && this.options.keepOnExit,
      beforeDone: () => {
        const jobId = made.shell?.record.job_id
        if (this.options.completed === undefined || jobId === undefined || start.caller === undefined) return
        this.options.jobs()?.hold(jobId, start.caller)
      },
      // Host 0.1.7 reads each stream as its own source.
      streams: this.options.jobs()?.line === '0.1.7',
    }
    return { init, files: BackgroundShell.files(init), made }
  }

  /** Start one background shell, as a host job when they serve the caller (stops then come by its cancel); rejects if none started. */
  async start(start: ShellStart): Promise<BackgroundShell> {
    const prepared = this.prepare(start)
    const { id, owner } = prepared.init
    this.starting.set(id, owner)
    let started
    try {
      started = await start.world.start(start.launch, id, prepared.files)
    } finally {
      this.starting.delete(id)
    }
    return this.register(prepared, start.caller, started)
  }

  /** Whether the host jobs serve `caller` (false when unknown to be so): a foreground run may then move to the background. */
  jobsServe(caller: Caller): boolean {
    return this.options.jobs()?.serves(caller) ?? false
  }

  /**
   * A foreground run's way to the background: its shell id and log from the start; at the timeout, unless `refuse` says
   * why not, a shell that is also a host job adopts the running command. Its output passes through this host: it is
   * never kept past the host's exit.
   */
  mover(start: ShellStart & { caller: Caller }, refuse: () => string | undefined): Mover {
    const prepared = this.prepare(start, false)
    const { init, files } = prepared
    const writer = hostLog(files)
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
          this.register(prepared, start.caller, hostWritten(started, writer), true)
          return undefined
        } catch (error) {
          return error instanceof Error ? error.message : String(error)
        }
      },
      discard: () => {
        writer.close()
        for (const file of [init.outputFile, files.streams]) rmSync(file, { force: true })
      },
    }
  }

  /** `moved`: a foreground run that outgrew its timeout, only ever as a host job (its end must be told). */
  private register(prepared: Prepared, caller: Caller | undefined, started: StartedShell, moved = false): BackgroundShell {
    const { init, files } = prepared
    const { id, owner } = init
    let shell: BackgroundShell | undefined
    const jobs = this.options.jobs()
    if (moved && (jobs === undefined || caller === undefined)) throw new HarnessError('no job controller serves this call', 'NO_JOBS')
    if (jobs !== undefined && caller !== undefined) {
      try {
        const jobId = jobs.start({
          label: init.command, owner: caller,
          run: () => {
            shell = new BackgroundShell(init, started, moved)
            return shell.hooks(this.options.readLimit)
          },
        })
        if (shell !== undefined) shell.record.job_id = jobId
      } catch (error) {
        // No controller serves this agent: the shell runs on the registry alone. Anything else is the host's refusal,
        // and what started is stopped.
        if (moved || shell !== undefined || !/no job controller/.test(String(error))) {
          const orphan = shell ?? new BackgroundShell(init, started, moved)
          void orphan.terminate(this.defaultKill(), true).catch(() => {})
          throw error
        }
      }
    }
    shell ??= new BackgroundShell(init, started)
    const made = shell
    prepared.made.shell = made
    this.shells.set(id, made)
    if (owner !== '') this.options.started?.(owner)
    // Off the launch path (its fsyncs): the record right after the start, the end only once it is there.
    const entered = new Promise<void>((resolve) => setImmediate(() => {
      this.enter(made, files)
      resolve()
    }))
    this.saveRunning()
    void made.settled.then(async (snapshot) => {
      await entered
      this.ended(made, snapshot)
      this.saveRunning()
      // Its completion notice comes after a watch's last lines, and nothing of the watch follows it.
      if (made.saysMore) await made.said()
      this.options.completed?.(snapshot, made.stopCause)
    })
    return made
  }

  /**
   * A shell of a host that is gone, taken back at resume: registered again under its own id (a new host job id, the
   * session's agent its owner), its record told the job id; its end is recorded and told as any shell's.
   */
  adopt(taken: { record: LedgerRecord, caller: Caller, started: StartedShell, world: ShellWorld }): BackgroundShell {
    const { record, caller, started } = taken
    const id = record.shellId
    let shell: BackgroundShell | undefined
    const jobs = this.options.jobs()
    const init: ShellInit = {
      toolName: this.options.toolName, id, command: record.command, owner: record.session, world: taken.world,
      launch: { argv: ['bash', '-c', record.command], cwd: record.cwd, env: {} }, maxLogBytes: this.options.maxLogBytes,
      outputFile: record.log, cancelRequest: () => this.takePending(id) ?? this.defaultKill(), startedAt: record.startedAt,
      files: {
        streams: record.streams, exitFile: record.exitFile, ttlMs: record.ttlMs,
        ledger: { root: this.options.ledger.root, session: record.session },
      },
      keepOnTeardown: this.options.keepOnExit,
      beforeDone: () => {
        const jobId = shell?.record.job_id
        if (this.options.completed !== undefined && jobId !== undefined) jobs?.hold(jobId, caller)
      },
    }
    if (jobs !== undefined) {
      try {
        const jobId = jobs.start({ label: record.command, owner: caller, run: () => {
          shell = new BackgroundShell(init, started)
          return shell.hooks(this.options.readLimit)
        } })
        if (shell !== undefined) shell.record.job_id = jobId
      } catch (error) {
        // No controller serves this agent: the shell is the registry's alone. Anything else: not taken back.
        if (shell !== undefined || !/no job controller/.test(String(error))) throw error
      }
    }
    shell ??= new BackgroundShell(init, started)
    const made = shell
    this.shells.set(id, made)
    this.note(made, { ...made.record.job_id === undefined ? {} : { jobId: made.record.job_id }, keep: this.options.keepOnExit })
    this.saveRunning()
    void made.settled.then(async (snapshot) => {
      this.ended(made, snapshot)
      this.saveRunning()
      if (made.saysMore) await made.said()
      this.options.completed?.(snapshot, made.stopCause)
    })
    for (const listener of this.takenBackListeners) listener(made, record.watch, caller)
    return made
  }

  /** A session's take-back under way (resume): its /tasks and stops wait for it. */
  takingBack(session: string, gate: Promise<void>): void {
    this.takeBacks.set(session, gate)
    void gate.finally(() => { if (this.takeBacks.get(session) === gate) this.takeBacks.delete(session) })
  }

  /** Once the caller's session's take-back (if any is under way) is done. */
  async takenBack(caller: Caller | undefined): Promise<void> {
    const gate = caller === undefined ? undefined : this.takeBacks.get(caller.id)
    if (gate !== undefined) await gate
  }

  /** Whether this registry holds the shell (running or finished and still listed). */
  has(id: string): boolean {
    return this.shells.has(id)
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
    await this.takenBack(caller)
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
    shell.stopCause ??= 'model'
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
    this.exiting = 'stopped-at-exit'
    const request = this.defaultKill()
    await Promise.all([this.foreground.stopAll(), ...this.live().map((shell) => {
      shell.stopCause ??= 'exit'
      return shell.terminate(request, true)
    })])
  }
}
