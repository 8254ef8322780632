// What a host and its keeper (keeper.ts) say over their IPC channel (advanced serialization: Buffers pass as bytes).
import type { StreamName } from './log-writer.ts'

/** The files and policy of one kept shell, as the host planned them. */
export interface KeptFiles {
  log: string
  streams: string
  exitFile: string
  maxLogBytes: number
  toolName: string
}

/** How the keeper stops a shell whose TTL ran out: its group, its cgroup, its marks (the host's kill policy). */
interface KeptStop {
  graceMs: number
  afterKillMs: number
  reapMs: number
}

/** Host → keeper: spawn one shell. `marks`: `NAME=value` environment marks; `cgroup`: its cgroup, when it has one. */
export interface SpawnRequest {
  t: 'spawn'
  id: string
  argv: [string, ...string[]]
  cwd: string
  env: NodeJS.ProcessEnv
  marks: string[]
  cgroup?: { kind: 'cgroup-v2' | 'cgroup-v1', path: string }
  files: KeptFiles
  /** How long the shell may run once no host holds it; its ledger record, when it has an owner session. */
  ttlMs: number
  ledger?: { root: string, session: string }
  stop: KeptStop
  /** What `shown` program to name when nothing started. */
  shown: string
}

/**
 * Host → keeper: the host leaves (a plugin dispose; an exiting host's channel just closes). Said in words as well as by
 * closing the channel: Node's `disconnect()` never closes a channel in which a message from the keeper is half read
 * (it waits for that message, then drops it as the channel is gone), so the keeper may never see it close.
 */
interface HostLeaves {
  t: 'leave'
}

/** What a host says to its keeper. */
export type HostMessage = SpawnRequest | HostLeaves

/** The exit file: what the keeper saw of a shell's end (the truth when no host was there). */
export interface ExitRecord {
  v: 1
  shellId: string
  code: number | null
  signal: string | null
  leaderExitedAt: number
  endedAt: number
  bytes: number
  capped: boolean
  failure?: string
  /** Set when the keeper stopped it at its TTL. */
  ttlKilled?: true
}

export type KeeperMessage =
  | { t: 'spawned', id: string, pid: number, start: number }
  | { t: 'failed', id: string, code: 'SPAWN_FAILED' | 'LOG_UNAVAILABLE', reason: string }
  | { t: 'out', id: string, chunk: Uint8Array, stream: StreamName, at: number }
  | { t: 'stopped', id: string, failure?: string }
  | { t: 'exit', id: string, code: number | null, signal: string | null, at: number }
  | { t: 'drained', id: string }
