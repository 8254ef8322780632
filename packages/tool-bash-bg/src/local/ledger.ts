// The durable ledger: one JSON record per background shell, under a per-user, per-session directory that outlives
// the host and a reboot's /tmp wipe ($DSH_HOME/bash-bg/ledger/<sha256(session), 16 hex>/<shellId>.json). Every write
// replaces the record whole (tmp, fsync, rename, fsync dir): a crash at any instant leaves the old or the new one.
import { createHash, randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlink, writeSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { privateDirProblem } from './host-dir.ts'

/** The ledger's bounds, stated in the README: records kept per session, and how long an ended shell's record stays. */
export const LEDGER_LIMITS = {
  perSession: 100,
  maxAgeMs: 7 * 24 * 3_600_000,
  /** A tmp file (or an exit file without its record) this old is a leftover: a crashed write's, a keeper's late one. */
  staleTmpMs: 60_000,
} as const

/** A shell's state in the ledger: stopped-at-exit (keepOnExit false), interrupted (gone with no exit record). */
export type LedgerState = 'running' | 'ended' | 'killed' | 'stopped-at-exit' | 'interrupted'

export type LedgerRecord = {
  v: 1
  shellId: string
  jobId?: string
  /** The owner session id (exec.agent.id). */
  session: string
  command: string
  cwd: string
  pid: number
  /** The leader's /proc start time (clock ticks after boot): with `pidns`, what proves the pid is still this shell. */
  pidStart: number
  pidns: string
  cgroup?: string
  log: string
  /** The stream sidecar: which byte ranges of the log came from stderr. */
  streams: string
  /** Written by the keeper when the shell ends: the truth when no host was there. */
  exitFile: string
  keeper?: { pid: number, start: number, socket?: string }
  startedAt: number
  endedAt?: number
  exitCode?: number | null
  signal?: string | null
  state: LedgerState
  keep: boolean
  hostExitedAt?: number
  ttlMs: number
  /** Part B's: the completion notice and whether the model got it. */
  delivery?: { messageId: string, state: 'delivering' | 'delivered' }
  /** Its watch (issue 30), as of its last notice: re-armed when the session takes the shell back. */
  watch?: { pattern: string, watch_max: number, delivered: number, log_offset: number } | undefined
}

/** What `update` may change: anything but the identity. */
export type LedgerPatch = Partial<Omit<LedgerRecord, 'v' | 'shellId' | 'session'>>

const RECORD = /^(bg-[a-z0-9]{6})\.json$/
const EXIT_FILE = /^(bg-[a-z0-9]{6})\.exit\.json$/

/** The ledger root: $DSH_HOME (else ~/.dsh)/bash-bg/ledger. */
export function ledgerRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.DSH_HOME ?? join(homedir(), '.dsh'), 'bash-bg', 'ledger')
}

/** A session's directory name: no session id (any bytes a host allows) ever becomes a path. */
export function sessionKey(session: string): string {
  return createHash('sha256').update(session).digest('hex').slice(0, 16)
}

/** The exit file the keeper writes beside a shell's record (in the ledger: it outlives /tmp too). */
export function exitFileOf(dir: string, shellId: string): string {
  return join(dir, `${shellId}.exit.json`)
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Replace `file` whole with `text` (0600): tmp beside it, fsync, rename, fsync the directory. */
export function writeAtomic(file: string, text: string, dir: string): void {
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`
  try {
    const fd = openSync(tmp, 'wx', 0o600)
    try {
      writeSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
  } catch (error) {
    rmSync(tmp, { force: true })
    throw error
  }
  fsyncDir(dir)
}

function isRecord(value: unknown, session: string, shellId: string): value is LedgerRecord {
  const record = value as Partial<LedgerRecord> | null
  return typeof record === 'object' && record !== null && record.v === 1 && record.shellId === shellId && record.session === session
    && Number.isSafeInteger(record.pid) && typeof record.pidStart === 'number' && typeof record.state === 'string'
}

/** Undefined when missing, unreadable, or not this shell's record of this session (a forged or foreign file). */
function readRecord(dir: string, session: string, shellId: string): LedgerRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, `${shellId}.json`), 'utf8'))
    return isRecord(parsed, session, shellId) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** When a record stopped mattering to its shell: its end, or its host's exit, or its start. */
const settledAt = (record: LedgerRecord) => record.endedAt ?? record.hostExitedAt ?? record.startedAt

export class Ledger {
  constructor(readonly root: string = ledgerRoot()) {}

  /** The session's directory (made 0700 and checked ours by `write`). */
  dirOf(session: string): string {
    return join(this.root, sessionKey(session))
  }

  /** Why the session's directory cannot hold records, or undefined when it can. */
  problem(session: string): string | undefined {
    return privateDirProblem(this.root) ?? privateDirProblem(this.dirOf(session))
  }

  /** Create or replace a record whole. Throws when the directory is not ours alone, or the disk refuses. */
  write(record: LedgerRecord): void {
    const dir = this.dirOf(record.session)
    const problem = this.problem(record.session)
    if (problem !== undefined) throw new Error(`ledger directory ${dir}: ${problem}`)
    writeAtomic(join(dir, `${record.shellId}.json`), JSON.stringify(record), dir)
  }

  read(session: string, shellId: string): LedgerRecord | undefined {
    return RECORD.test(`${shellId}.json`) ? readRecord(this.dirOf(session), session, shellId) : undefined
  }

  /** Apply `patch` to the record on disk (only if `when` holds of it); undefined (nothing written) when there is none. */
  update(session: string, shellId: string, patch: LedgerPatch, when?: (current: LedgerRecord) => boolean): LedgerRecord | undefined {
    const current = this.read(session, shellId)
    if (current === undefined || when?.(current) === false) return undefined
    const next = { ...current, ...patch }
    this.write(next)
    return next
  }

  /** The session's records, oldest start first; files that are not a whole record of this session are skipped. */
  list(session: string): LedgerRecord[] {
    const dir = this.dirOf(session)
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return []
    }
    const records = names.flatMap((name) => {
      const id = RECORD.exec(name)?.[1]
      const record = id === undefined ? undefined : readRecord(dir, session, id)
      return record === undefined ? [] : [record]
    })
    return records.sort((a, b) => a.startedAt - b.startedAt)
  }

  /** A shell's record and the keeper's exit file; none for an id that is not a shell's. */
  private filesOf(session: string, shellId: string): string[] {
    if (!RECORD.test(`${shellId}.json`)) return []
    const dir = this.dirOf(session)
    return [join(dir, `${shellId}.json`), exitFileOf(dir, shellId)]
  }

  /** The record and the keeper's exit file. */
  remove(session: string, shellId: string): void {
    for (const file of this.filesOf(session, shellId)) rmSync(file, { force: true })
  }

  /**
   * `remove` once the current turn of the event loop is done, the unlinks in the thread pool (a file already gone is
   * no error): for a record no one reads again, whose removal nothing waits for.
   */
  discard(session: string, shellId: string): void {
    const files = this.filesOf(session, shellId)
    setImmediate(() => { for (const file of files) unlink(file, () => {}) })
  }

  /**
   * Bound every session's records: delivered ended shells go; ended ones past LEDGER_LIMITS.maxAgeMs go; past
   * perSession the oldest ended ones go (a running shell's record stays). Crashed writes' tmp files go, and exit files
   * whose record went (a keeper writes its own after a host removed the record). Returns how many records were removed.
   */
  prune(now: number = Date.now()): number {
    let sessions: string[]
    try {
      sessions = readdirSync(this.root)
    } catch {
      return 0
    }
    let removed = 0
    for (const key of sessions) {
      if (!/^[0-9a-f]{16}$/.test(key)) continue
      removed += this.pruneDir(join(this.root, key), now)
    }
    return removed
  }

  private pruneDir(dir: string, now: number): number {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return 0
    }
    const records: LedgerRecord[] = []
    const present = new Set(names)
    const stale = (name: string) => now - (statSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? now) > LEDGER_LIMITS.staleTmpMs
    const orphan = (name: string) => EXIT_FILE.test(name) && !present.has(name.replace(EXIT_FILE, '$1.json'))
    for (const name of names) {
      if ((name.endsWith('.tmp') || orphan(name)) && stale(name)) rmSync(join(dir, name), { force: true })
      if (name.endsWith('.tmp')) continue
      const id = RECORD.exec(name)?.[1]
      if (id === undefined) continue
      try {
        const parsed = JSON.parse(readFileSync(join(dir, name), 'utf8')) as LedgerRecord
        if (parsed.v === 1 && parsed.shellId === id && typeof parsed.session === 'string' && dir.endsWith(sessionKey(parsed.session))) records.push(parsed)
      } catch {}
    }
    const drop = (record: LedgerRecord) => this.remove(record.session, record.shellId)
    const ended = records.filter((record) => record.state !== 'running')
    const gone = new Set(ended.filter((record) => record.delivery?.state === 'delivered' || now - settledAt(record) > LEDGER_LIMITS.maxAgeMs))
    const left = ended.filter((record) => !gone.has(record)).sort((a, b) => settledAt(a) - settledAt(b))
    const over = records.length - gone.size - LEDGER_LIMITS.perSession
    for (const record of left.slice(0, Math.max(0, over))) gone.add(record)
    // The session's directory stays: a writer may be making a record in it right now.
    for (const record of gone) drop(record)
    return gone.size
  }
}
