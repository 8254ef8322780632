/** The `backgroundShells` service contract; consumers import these types only and `inject` the service. */

export type ShellStatus = 'running' | 'completed' | 'killed' | 'error'

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT'

/** The first signal, whether to escalate to SIGKILL, and the wait before it. */
export interface KillRequest {
  signal: KillSignal
  force: boolean
  timeoutMs: number
}

/** What a kill did, measured on the real process group. */
export interface KillOutcome {
  /** 'none' when the group was already empty. */
  signal_sent: KillSignal | 'none'
  force_killed: boolean
  exit_code: number | null
  elapsed_ms: number
  /** The wait before SIGKILL of the kill that ran (a shared kill's, not the request's). */
  timeout_ms: number
  /** Pids still alive at the end. */
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
  /** The starting agent's session id ('' without one). */
  readonly owner: string
  readonly started_at: string
  status: ShellStatus
  exit_code: number | null
  signal: string | null
  /** The group may outlive its leader. */
  leader_exited_at: string | null
  /** When the whole group was observed empty and the log flushed. */
  ended_at: string | null
  readonly output_file: string
  bytes: number
  capped: boolean
  last_output_at: string | null
  /** Live processes (group and marked) at the last look. */
  processes: number
  /** A kill_shell request the host job's cancel carries out. */
  kill_request?: KillRequest
}

/** What tool-kill-shell and tool-read call. */
export interface BackgroundShellRegistry {
  /** The private 0700 directory of every shell's log. */
  readonly logDir: string
  /** What a bare host `job_kill` does; tool-kill-shell sets its configured timeout here. */
  defaultKill: KillRequest
  /** The tool that stops a shell: tool-kill-shell sets its configured name. */
  stopTool: string | undefined
  find(idOrJobId: string): ShellRecord | undefined
  list(): ShellRecord[]
  /** Status, run time, output size and time since the last output. */
  liveness(record: ShellRecord): string
  /**
   * Signal the group and every marked process, wait, escalate when `force`, report a fresh census's survivors.
   * Refuses the host's own pids (SHELL_PROTECTED_PID). A call during another shares it unless it asks for more.
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
