// The per-shell process layer the registry and the foreground run drive, one implementation per execution world:
// the local world's ProcessGroup (own process group, marks, /proc census) or a ctx.subprocess-backed handle.
import type { Readable } from 'node:stream'
import type { Launch } from './launch.ts'

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT'

/** The first signal, whether to escalate to SIGKILL, and the wait before it. */
export interface KillRequest {
  signal: KillSignal
  force: boolean
  timeoutMs: number
}

/**
 * How the local world knows a shell's processes. 'cgroup': a cgroup per shell, which no process leaves by setsid,
 * a scrubbed environment or a new title. 'marks': the process group plus the DSH_BG_SHELL mark in each environment,
 * remembered per pid once seen; a process that cleared its environment and left the group before any look is unseen.
 */
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

/** How and when the leader (the `bash -c` process, or the sandbox runner) ended. */
export interface LeaderExit {
  code: number | null
  signal: string | null
  at: Date
}

/** One started command's processes, in whatever world runs them. */
export interface ShellProcesses {
  /** The pid the value and the record show (locally the process-group id). */
  readonly pid: number
  /** Settles once, when the leader exits. */
  readonly exited: Promise<LeaderExit>
  /** Processes alive at the last look (1 until the first look). */
  readonly live: number
  /** True once nothing of the shell is left; `timeoutMs` may be Infinity. Never holds the host open. */
  whenEmpty(timeoutMs: number): Promise<boolean>
  /**
   * Once the leader exited and its process group is empty, though members that left the group may live on (a
   * foreground run's end: those are its leftovers). Absent where the world cannot tell them apart: whenEmpty serves.
   */
  whenGroupEmpty?(): Promise<void>
  /** Live pids by a fresh look, sorted (leftovers of a foreground run, a kill's survivors). */
  census(): number[]
  /**
   * Signal, wait up to `request.timeoutMs` for the shell to empty, escalate to SIGKILL when `force`,
   * then report; `onSignalled` runs once a signal landed. Never signals anything but this shell.
   */
  terminate(request: KillRequest, onSignalled?: () => void): Promise<KillOutcome>
  /** Host exit, without yielding: send `signal` now; false when nothing was left to signal. */
  signalNow(signal: 'SIGTERM' | 'SIGKILL'): boolean
  /** Host exit, without yielding: whether anything may still be alive (a world that cannot look says false). */
  aliveNow(): boolean
}

/** A started command: its processes and its two output streams (drained by the caller, to a log or a tail). */
export interface StartedShell {
  readonly processes: ShellProcesses
  readonly stdout: Readable
  readonly stderr: Readable
  /** The command (its process and streams) no longer keeps the host's event loop alive: a background shell's exit handlers stop it. */
  release(): void
}

/** Where commands run. Every call, foreground and background, starts through one of these. */
export interface ShellWorld {
  /** 'local': this host's own process layer; 'subprocess': the composed ctx.subprocess. */
  readonly kind: 'local' | 'subprocess'
  /** What this world cannot promise, said in a background value and the README; undefined locally. */
  readonly limits?: string
  /**
   * Start `launch` synchronously (a host job's `run` must return at once) with `marks` added to its
   * environment; throws a HarnessError (SPAWN_FAILED) when nothing started.
   */
  start(launch: Launch, marks: Readonly<Record<string, string>>): StartedShell
}
