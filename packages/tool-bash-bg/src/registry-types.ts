/**
 * The contract of the `backgroundShells` Cordis service. tool-kill-shell (and optionally
 * tool-read) import these types only (`import type`) and `inject` the service; no other runtime
 * state is shared between the packages.
 */

export type ShellStatus = 'running' | 'completed' | 'killed' | 'error'

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT'

/** What a kill asks for: the first signal, whether to escalate to SIGKILL, and the wait before it. */
export interface KillRequest {
  signal: KillSignal
  force: boolean
  timeoutMs: number
}

/** What a kill did, measured on the real process group. */
export interface KillOutcome {
  /** The first signal sent, or 'none' when the group was already empty. */
  signal_sent: KillSignal | 'none'
  force_killed: boolean
  /** The leader's exit code when it exited normally, else null. */
  exit_code: number | null
  elapsed_ms: number
  /** Pids of the group still alive at the end (empty means everything is gone). */
  survivors: number[]
}

export interface ShellRecord {
  readonly id: string
  /** The host job id, when the shell is also a DSH job. */
  readonly job_id?: string
  /** The leader's pid, which is also the process-group id. */
  readonly pid: number
  readonly command: string
  readonly cwd: string
  /** The session id of the agent that started the shell ('' for a call with no agent). */
  readonly owner: string
  /** ISO time the shell started. */
  readonly started_at: string
  status: ShellStatus
  /** The leader's exit code, when it exited normally. */
  exit_code: number | null
  /** The signal that ended the leader, when one did. */
  signal: string | null
  /** ISO time the leader exited (the group may outlive it). */
  leader_exited_at: string | null
  /** ISO time the whole group was observed empty and the log flushed. */
  ended_at: string | null
  readonly output_file: string
  /** Bytes captured in the log so far. */
  bytes: number
  /** True once capture stopped at maxLogBytes. */
  capped: boolean
  /** ISO time the log last grew, null before any output. */
  last_output_at: string | null
  /** Live processes (group and marked) at the last look; counted once the leader exited. */
  processes: number
  /** A kill requested through the host job path, carried out by the job's cancel. */
  kill_request?: KillRequest
}

export interface BackgroundShellRegistry {
  /** The private 0700 directory holding every shell's log. */
  readonly logDir: string
  /**
   * What a bare host `job_kill` (a job's cancel with no kill_shell request stored) does:
   * SIGTERM, then SIGKILL after `timeoutMs` (5000 until tool-kill-shell sets its configured
   * default here).
   */
  defaultKill: KillRequest
  /** The tool the model stops a shell with: tool-kill-shell sets its (configurable) name. */
  stopTool: string | undefined
  register(record: ShellRecord): void
  get(id: string): ShellRecord | undefined
  /** Look a shell up by its id or its host job id. */
  find(idOrJobId: string): ShellRecord | undefined
  list(): ShellRecord[]
  running(owner?: string): ShellRecord[]
  /** Drop a finished shell's record and its log; false for a running or unknown shell. */
  remove(id: string): boolean
  /** Drop finished shells (and their logs) that ended more than `maxAgeMs` ago (default one hour); returns how many. */
  prune(maxAgeMs?: number): number
  /**
   * Signal the shell's process group and every process carrying its marker, wait up to `timeoutMs` for it to empty, escalate to
   * SIGKILL when `force`, and report survivors. Never signals a group already observed empty
   * (pid reuse). Resolves when the record has settled. A call made while another is under way
   * shares it, unless it asks for more (`force` or SIGKILL after one without): then it waits
   * for that one and, when anything survived, runs anew.
   */
  terminate(id: string, request: KillRequest): Promise<KillOutcome>
  /** Resolves once the shell's group is empty and its log flushed. */
  settled(id: string): Promise<ShellRecord>
  /** Pids currently in the shell's process group or carrying its marker (from /proc). */
  members(id: string): number[]
  /**
   * A fresh /proc census of the shell's processes that trusts no cached state: live group
   * members (unless a newer process holds the group id) and every process carrying its marker.
   */
  survivors(id: string): number[]
  /** Status, run time, output bytes and time since the last output, in a few words. */
  liveness(record: ShellRecord): string
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    backgroundShells: BackgroundShellRegistry
  }
}
