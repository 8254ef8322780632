// The `backgroundShells` service contract: what tool-kill-shell and tool-read may call, and the kill and launch
// vocabulary every room of this package speaks. Consumers import these types only and `inject` the service; this
// file imports nothing.

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT'

/** The first signal, whether to escalate to SIGKILL, and the wait before it. */
export interface KillRequest {
  signal: KillSignal
  force: boolean
  timeoutMs: number
}

/** How the local world knows a shell's processes: a cgroup per shell, or its group and environment marks (README). */
export type Tracking = 'cgroup' | 'marks'

/** What a kill did, measured in the shell's world ('none': it was already empty). */
export interface KillOutcome {
  signal_sent: KillSignal | 'none'
  force_killed: boolean
  exit_code: number | null
  elapsed_ms: number
  /** The wait before SIGKILL of the kill that ran (a shared kill's, not the request's). */
  timeout_ms: number
  survivors: number[]
  /** The local world's tracking in force (absent in another world: `world_limits` says what it cannot promise). */
  tracking?: Tracking
  /** Set for a shell of another execution world: what its one stop cannot promise. */
  world_limits?: string
}

/** How and when a command's leader (the `bash -c` process, or the sandbox runner) ended. */
export interface LeaderExit {
  code: number | null
  signal: string | null
  at: Date
}

/** What to spawn. `env`: the whole environment in the local world; only the explicit entries in another. */
export interface Launch {
  argv: [string, ...string[]]
  cwd: string
  env: NodeJS.ProcessEnv
}

export type ShellStatus = 'running' | 'completed' | 'killed' | 'error'

/** One shell as it was when read: a fresh copy each time, never the registry's own record. */
export interface ShellSnapshot {
  readonly id: string
  readonly job_id?: string
  /** The leader's pid (locally the process-group id). */
  readonly pid: number
  readonly command: string
  readonly cwd: string
  /** The starting agent's session id ('' without one). */
  readonly owner: string
  readonly started_at: string
  readonly status: ShellStatus
  readonly exit_code: number | null
  readonly signal: string | null
  readonly leader_exited_at: string | null
  /** When the whole shell was observed empty and the log flushed. */
  readonly ended_at: string | null
  readonly output_file: string
  readonly bytes: number
  readonly capped: boolean
  readonly last_output_at: string | null
  readonly processes: number
  /** Set when the log is not the whole output: 'log removed', 'log failed (ENOSPC)'. */
  readonly log_problem?: string
  /** Set when the shell runs through ctx.subprocess (another execution world): what that world cannot promise. */
  readonly world_limits?: string
}

/** The calling agent (a tool call's `exec.agent`); its id is its session id. Absent: a call with no agent. */
export interface Caller {
  readonly id: string
}

/** How a stop ended, with the measured kill and the shell as it was afterwards. */
export interface StopOutcome extends KillOutcome {
  outcome: 'terminated' | 'force-killed' | 'survivors' | 'already-exited'
  shell: ShellSnapshot
  /** This stop joined one already under way (another call's, a host job_kill's): it sent nothing itself. */
  joined?: true
}

/** A tool that stops shells: named in bash_bg's values and /tasks; its `defaultKill` is what a bare host job_kill does. */
export interface StopperOptions {
  toolName: string
  defaultKill: KillRequest
}

export interface BackgroundShells {
  /** The private directory of the shells' logs (tool-read reads there without asking). */
  readonly logDir: string
  /**
   * The shell with this id or host job id; undefined when unknown. Throws SHELL_FOREIGN for a shell of
   * another session (one started with no agent is open to every caller).
   */
  find(idOrJobId: string, caller: Caller | undefined): ShellSnapshot | undefined
  /** The shells `caller` may see, in start order. */
  list(caller: Caller | undefined): ShellSnapshot[]
  /** How a shell is doing, in a few words ('running 5m12s, 12.3 KiB, last 3s ago'). */
  liveness(shell: ShellSnapshot): string
  /**
   * Stop one shell: a host job through the host jobs (which record the kill), else directly; a kill under way is shared.
   * Resolves once measured (and settled, if nothing survived). Rejects SHELL_NOT_FOUND, SHELL_FOREIGN, SHELL_PROTECTED_PID.
   */
  stop(id: string, request: KillRequest, caller: Caller | undefined): Promise<StopOutcome>
  /** Resolves once every process of the shell is gone and its log flushed. */
  settled(id: string): Promise<ShellSnapshot>
  /** Attach a stopping tool; the disposer detaches it (the previous one, if any, applies again). */
  attachStopper(options: StopperOptions): () => void
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    backgroundShells: BackgroundShells
  }
}
