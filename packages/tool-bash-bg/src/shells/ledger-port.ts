// What delivery and resume need of the per-session ledger (one durable record per shell, replaced atomically): the
// record's shape and three operations. The ledger itself lives with the keeper; this port names only what is read here.

/** One shell's durable record (its session's ledger holds one per shell until its completion is delivered). */
export interface LedgerRecord {
  v: 1
  shellId: string
  jobId?: string
  /** The owner session id (the starting agent's id). */
  session: string
  command: string
  cwd: string
  pid: number
  /** The leader's start time in clock ticks since boot (/proc/<pid>/stat field 22). */
  pidStart: number
  /** The PID namespace `pid` belongs to (`pid:[4026531836]`). */
  pidns: string
  cgroup?: string
  log: string
  streams: string
  /** Where the shell side writes its exit status once the leader ended. */
  exitFile: string
  keeper?: { pid: number, start: number, socket?: string }
  startedAt: number
  endedAt?: number
  exitCode?: number | null
  signal?: string | null
  state: 'running' | 'ended' | 'killed' | 'stopped-at-exit' | 'interrupted'
  keep: boolean
  hostExitedAt?: number
  ttlMs: number
  /** The completion notice: written, fsynced, before it is handed to the model; `delivered` once the session log holds it. */
  delivery?: { messageId: string, state: 'delivering' | 'delivered' }
}

export interface LedgerPort {
  /** The session's records (none of another session's). */
  list(session: string): LedgerRecord[]
  /** Merge `patch` into the record and replace it durably; undefined when there is no such record. */
  update(session: string, shellId: string, patch: Partial<LedgerRecord>): LedgerRecord | undefined
  remove(session: string, shellId: string): void
}
