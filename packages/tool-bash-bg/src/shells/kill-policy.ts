/** Every wait of a stop, in one place: grace before SIGKILL, settle and drain times, the escalation's last wait. */
import type { KillRequest } from '../contract.ts'

export const KILL_POLICY = {
  /** A bare job_kill and dispose with no stopper attached: tool-kill-shell's `timeoutMs` default (its spec holds them equal). */
  bareKill: { signal: 'SIGTERM', force: true, timeoutMs: 5000 } as const satisfies KillRequest,
  /** A foreground command's SIGTERM grace at its timeout or abort, before SIGKILL (both worlds). */
  runGraceMs: 2000,
  /** After SIGKILL, how long the kernel may take to finish a shell before what is left counts as survivors. */
  afterKillMs: 1000,
  /** How long a stop waits for Node to reap a leader that already exited (a zombie pins its group). */
  reapMs: 1000,
  /** How long a command's processes may outlive its output (another world) before they count as leftovers. */
  settleMs: 500,
  /** How long the output may stay open once nothing of a foreground command is left to write it. */
  pipeGraceMs: 1000,
  /** How long a background shell's pipes are drained once the shell is empty (a process that left it may hold them). */
  drainMs: 1000,
  /** A dead host's leftovers: SIGTERM, this long, SIGKILL. */
  leftoverGraceMs: 1000,
  /** Host exit, which cannot yield: SIGTERM, this long, SIGKILL. */
  exitGraceMs: 250,
} as const
