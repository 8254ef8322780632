// What the shells room asks of an execution world (this host's process layer, or ctx.subprocess): one object that
// runs a foreground command and starts a background shell. local/ and seam/ meet these by shape, importing nothing here.
import type { Readable } from 'node:stream'
import type { KillOutcome, KillRequest, Launch, LeaderExit } from '../contract.ts'

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
  /** Once the leader exited and its group is empty (what left the group are a run's leftovers); else whenEmpty serves. */
  whenGroupEmpty?(): Promise<void>
  /** Live pids by a fresh look, sorted (leftovers of a foreground run, a kill's survivors). */
  census(): number[]
  /** Signal, wait up to `timeoutMs`, SIGKILL when `force`, report; `onSignalled` once a signal landed. Only this shell. */
  terminate(request: KillRequest, onSignalled?: () => void): Promise<KillOutcome>
  /** Host exit, without yielding: send `signal` now; false when nothing was left to signal. */
  signalNow(signal: 'SIGTERM' | 'SIGKILL'): boolean
  /** Host exit, without yielding: whether anything may still be alive (a world that cannot look says false). */
  aliveNow(): boolean
}

/** A started command: its processes and its two output streams (drained by the caller, to a tail). */
export interface StartedCommand {
  readonly processes: ShellProcesses
  readonly stdout: Readable
  readonly stderr: Readable
  /** The command (its process and streams) no longer keeps the host's event loop alive: a background shell's exit handlers stop it. */
  release(): void
}

export type StreamName = 'stdout' | 'stderr'

/** Told each piece of a log as written, with the stream it came from. */
export type LogWatcher = (written: Buffer, stream: StreamName) => void

/** A background shell's log as the shells room reads it: written by the keeper (local), or here (another world's). */
export interface LogFeed {
  readonly path: string
  readonly bytes: number
  /** The log stopped taking output (the cap, or a write error). */
  readonly capped: boolean
  /** The disk error that stopped capture (the log is then incomplete). */
  readonly failure: string | undefined
  readonly lastOutputAt: number | undefined
  /** Told each piece as written, with the stream it came from. */
  readonly watchers: Set<LogWatcher>
  /** Told once, when the log stops taking output. */
  readonly enders: Set<() => void>
  /** Why the log is not the shell's whole output, in a few words ('log removed', 'log failed (ENOSPC)'). */
  problem(): string | undefined
  /** True once all the output is in (false after `ms`: a process that left the shell may hold a pipe). */
  drained(ms: number): Promise<boolean>
  /** Where `stream`'s bytes from `from` (its own offset), at most `limit`, lie in the log; none unless kept (ShellFiles.pieces). */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[]
  close(): void
}

/** Where a background shell's log goes, and what its keeper needs once no host holds it (the local world). */
export interface ShellFiles {
  log: string
  /** The stream sidecar: the stderr byte ranges of the log. */
  streams: string
  /** Where the keeper writes the shell's end. */
  exitFile: string
  maxLogBytes: number
  toolName: string
  ttlMs: number
  ledger?: { root: string, session: string }
  /** Keep where each stream's bytes lie (a host that reads each stream as its own source). */
  pieces?: boolean
}

/** What the ledger records of a local shell's processes (another world has none). */
export interface ShellFacts {
  pidStart: number
  pidns: string
  cgroup?: string
  keeper?: { pid: number, start: number, socket?: string }
}

/** A started background shell: its processes and its log. */
export interface StartedShell {
  readonly processes: ShellProcesses
  readonly log: LogFeed
  /** Nothing of the shell keeps the host's event loop alive. */
  release(): void
  readonly facts?: ShellFacts
}

/**
 * A foreground run that may move to the background at its timeout (the local world's runs): marked with the shell id
 * it would have, and logged from its first byte, so a moved shell's log holds the whole output.
 */
export interface Mover {
  readonly shellId: string
  /** Takes both streams from the first byte. */
  attach(started: StartedCommand): void
  /** At the timeout: a background shell adopts the running command (undefined), or why it is stopped instead. */
  move(started: StartedCommand): string | undefined
  /** The run ended without moving: its log goes. */
  discard(): void
}

export interface RunOptions {
  timeoutMs: number
  /** Output kept per stream: its last bytes. */
  maxOutputBytes: number
  signal: AbortSignal
  move?: Mover
}

/** A stream's kept tail, and how many bytes were cut from its start; `binary`: no text kept, `cut` is its whole size. */
export interface StreamTail {
  text: string
  cut: number
  binary?: boolean
}

/** How a foreground run ended, in the value's words (the renderer maps it); `aborted`: by the call's signal. */
export interface RunResult {
  exit_code: number | null
  signal: string | null
  timed_out: boolean
  timeout_ms: number
  stdout: StreamTail
  stderr: StreamTail
  /** Processes the command left running, stopped (a world that counts none says 1: something). */
  leftovers_stopped: number
  /** Leftovers that outlived even SIGKILL. */
  leftovers_running?: number[]
  /** A process the tracking could not see held the output open; it was closed. */
  output_held_open: boolean
  /** What this world cannot promise (another world only). */
  world_limits?: string
  aborted: boolean
  /** At its timeout the command moved to the background (the tails are the output so far). */
  moved?: true
  /** Why a run that could have moved was stopped at its timeout instead. */
  not_moved?: string
}

export interface ShellWorld {
  /** What this world cannot promise, said in a background value and the README; undefined locally. */
  readonly limits?: string
  /** Whether `cwd` is a directory in this world; undefined when nothing is there. */
  directory(cwd: string): Promise<boolean | undefined>
  /** What a command's environment starts from (another world's provider adds its own base: nothing here). */
  baseEnv(): NodeJS.ProcessEnv
  /** Run a foreground command to its end (or its timeout, or the call's abort). */
  run(launch: Launch, options: RunOptions): Promise<RunResult>
  /** Start a background shell and its log; rejects SPAWN_FAILED, LOG_UNAVAILABLE. */
  start(launch: Launch, shellId: string, files: ShellFiles): Promise<StartedShell>
}
