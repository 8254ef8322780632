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
  /** The wait before SIGKILL of the kill that ran: a request sharing one already under way gets its wait. */
  timeout_ms: number
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

/** What consumers call: tool-kill-shell (find, list, liveness, terminate, settled, defaultKill, stopTool) and tool-read (logDir). */
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
  /** Look a shell up by its id or its host job id. */
  find(idOrJobId: string): ShellRecord | undefined
  list(): ShellRecord[]
  /** Status, run time, output bytes and time since the last output, in a few words. */
  liveness(record: ShellRecord): string
  /**
   * Signal the shell's process group and every process carrying its marker, wait up to
   * `timeoutMs` for them to end, escalate to SIGKILL when `force`, and report the survivors of a
   * fresh /proc census. Refuses a pid of the host or its ancestors (SHELL_PROTECTED_PID); never
   * signals a group already observed empty (pid reuse: `signal_sent: 'none'`). Resolves when the
   * record has settled. A call made while another is under way shares it, unless it asks for
   * more (`force` or SIGKILL after one without): then it waits for that one and, when anything
   * survived, runs anew.
   */
  terminate(id: string, request: KillRequest): Promise<KillOutcome>
  /** Resolves once every process of the shell is gone and its log flushed. */
  settled(id: string): Promise<ShellRecord>
}

declare module '@deepseek-ai/cordis' {
  interface Context {
    backgroundShells: BackgroundShellRegistry
  }
}
