/** The `backgroundShells` service contract; consumers import these types only and `inject` the service. */
import type { ShellRegistry } from './registry.ts'

export type ShellStatus = 'running' | 'completed' | 'killed' | 'error'

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT'

/** The first signal, whether to escalate to SIGKILL, and the wait before it. */
export interface KillRequest {
  signal: KillSignal
  force: boolean
  timeoutMs: number
}

/** What a kill did, measured on the real process group ('none': it was already empty). */
export interface KillOutcome {
  signal_sent: KillSignal | 'none'
  force_killed: boolean
  exit_code: number | null
  elapsed_ms: number
  /** The wait before SIGKILL of the kill that ran (a shared kill's, not the request's). */
  timeout_ms: number
  survivors: number[]
  /** Set when the shell runs through ctx.subprocess: what that world's one stop cannot promise. */
  world_limits?: string
}

export interface ShellRecord {
  readonly id: string
  readonly job_id?: string
  /** The leader's pid: the process-group id. */
  readonly pid: number
  readonly command: string
  readonly cwd: string
  /** The starting agent's session id ('' without one). */
  readonly owner: string
  readonly started_at: string
  status: ShellStatus
  exit_code: number | null
  signal: string | null
  leader_exited_at: string | null
  /** When the whole shell was observed empty and the log flushed. */
  ended_at: string | null
  readonly output_file: string
  bytes: number
  capped: boolean
  last_output_at: string | null
  processes: number
  /** Set when the shell runs through ctx.subprocess (another execution world): what it cannot promise. */
  readonly world_limits?: string
  /** A kill_shell request the host job's cancel carries out. */
  kill_request?: KillRequest
}

/** What tool-kill-shell and tool-read call; the rest of the registry is internal. */
export type BackgroundShellRegistry = Pick<ShellRegistry, 'logDir' | 'defaultKill' | 'stopTool' | 'find' | 'list' | 'liveness' | 'terminate' | 'settled'>

declare module '@deepseek-ai/cordis' {
  interface Context {
    backgroundShells: BackgroundShellRegistry
  }
}
