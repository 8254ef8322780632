/** The `backgroundShells` service: every shell this plugin started, by id, with its process group. */
import { randomInt } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { BackgroundShell } from './background.ts'
import { ProcessGroup, scanGroups } from './group.ts'
import type { HostDir } from './leftovers.ts'
import { liveness } from './liveness.ts'
import { protectedPids } from './process-group.ts'
import type { KillOutcome, KillRequest, ShellRecord } from './registry-types.ts'
import { SeamProcesses } from './seam-processes.ts'

const HOUR_MS = 60 * 60 * 1000
/** The crash record is rewritten at most this often, off the launch path (crash cleanup goes by the host mark anyway). */
const SAVE_DELAY_MS = 200

type Entry = { record: ShellRecord, shell?: BackgroundShell }

export class ShellRegistry {
  private readonly entries = new Map<string, Entry>()
  /** A bare host `job_kill`; tool-kill-shell sets its configured timeout here. */
  defaultKill: KillRequest = { signal: 'SIGTERM', force: true, timeoutMs: 5000 }
  /** tool-kill-shell's configured name. */
  stopTool: string | undefined
  /** Said once by /tasks: the shells of dead hosts stopped at start. */
  leftoverNotice: string | undefined
  readonly logDir: string
  private saving: NodeJS.Timeout | undefined

  constructor(readonly host: HostDir) {
    this.logDir = host.logDir
  }

  private live(): BackgroundShell[] {
    const entries = [...this.entries.values()]
    return entries.flatMap(({ record, shell }) => shell !== undefined && record.status === 'running' ? [shell] : [])
  }

  private saveRunning(): void {
    if (this.saving !== undefined) return
    this.saving = setTimeout(() => {
      this.saving = undefined
      this.host.save(this.live().map((shell) => shell.record.id))
    }, SAVE_DELAY_MS).unref()
  }

  newId(): string {
    for (;;) {
      const id = `bg-${randomInt(36 ** 6).toString(36).padStart(6, '0')}`
      if (!this.entries.has(id)) return id
    }
  }

  register(record: ShellRecord, shell?: BackgroundShell): void {
    if (this.entries.has(record.id)) throw new HarnessError(`shell ${record.id} is already registered — pick a new id`, 'SHELL_EXISTS')
    this.prune()
    this.entries.set(record.id, shell === undefined ? { record } : { record, shell })
  }

  track(shell: BackgroundShell): void {
    this.register(shell.record, shell)
    this.saveRunning()
    void shell.settled.then(() => this.saveRunning())
  }

  liveness(record: ShellRecord): string {
    return liveness(record, Date.now())
  }

  get(id: string): ShellRecord | undefined {
    const entry = this.entries.get(id)
    return entry?.shell?.sync() ?? entry?.record
  }

  find(idOrJobId: string): ShellRecord | undefined {
    return this.get(idOrJobId) ?? this.list().find((record) => record.job_id === idOrJobId)
  }

  list(): ShellRecord[] {
    return [...this.entries.values()].map((entry) => entry.shell?.sync() ?? entry.record)
  }

  running(owner?: string): ShellRecord[] {
    return this.list().filter((record) => record.status === 'running' && (owner === undefined || record.owner === owner))
  }

  /** Drop a finished shell's record and its log; false for a running or unknown shell. */
  remove(id: string): boolean {
    const entry = this.entries.get(id)
    if (entry === undefined || entry.record.status === 'running') return false
    this.drop(entry.record)
    return true
  }

  prune(maxAgeMs = HOUR_MS): number {
    const cutoff = Date.now() - maxAgeMs
    const old = this.list().filter(({ status, ended_at: ended }) => status !== 'running' && ended !== null && Date.parse(ended) <= cutoff)
    for (const record of old) this.drop(record)
    return old.length
  }

  private drop(record: ShellRecord): void {
    this.entries.delete(record.id)
    // Only a log of ours: a record registered from outside may name any file.
    if (dirname(resolve(record.output_file)) === this.logDir) rmSync(record.output_file, { force: true })
  }

  /** Signal, wait, escalate when `force`, report survivors; a request that asks no more than a kill under way shares it. */
  terminate(id: string, request: KillRequest): Promise<KillOutcome> {
    const entry = this.entries.get(id)
    if (entry === undefined) return Promise.reject(new HarnessError(`Shell not found: ${id}`, 'SHELL_NOT_FOUND'))
    const { record: { pid, exit_code }, shell } = entry
    // A corrupt or forged record must never aim a signal at the host or its ancestors (another world's pids are not the host's).
    const local = !(shell?.group instanceof SeamProcesses)
    if (local && (!Number.isSafeInteger(pid) || pid <= 1 || protectedPids().has(pid))) {
      return Promise.reject(new HarnessError(
        `refusing to signal shell ${id}: pid ${pid} is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`,
        'SHELL_PROTECTED_PID',
      ))
    }
    return shell?.terminate(request) ?? Promise.resolve({ signal_sent: 'none', force_killed: false, exit_code, elapsed_ms: 0, timeout_ms: 0, survivors: [] })
  }

  /** Resolves once every process of the shell is gone and its log flushed. */
  async settled(id: string): Promise<ShellRecord> {
    const entry = this.entries.get(id)
    if (entry === undefined) throw new HarnessError(`Shell not found: ${id}`, 'SHELL_NOT_FOUND')
    return entry.shell?.settled ?? entry.record
  }

  members(id: string): number[] {
    return this.entries.get(id)?.shell?.group.members() ?? []
  }

  survivors(id: string): number[] {
    return this.entries.get(id)?.shell?.group.census() ?? []
  }

  /** Plugin dispose. */
  async terminateAll(request: KillRequest): Promise<void> {
    await Promise.all(this.live().map((shell) => shell.terminate(request)))
  }

  /** Kill every running shell without yielding to the event loop (process exit): SIGTERM, up to `graceMs`, SIGKILL. */
  terminateAllSync(graceMs: number): void {
    // Another world's shells get the seam's stop, and its provider's own exit handling; ours are watched here.
    let alive = this.live().map((shell) => shell.group).filter((group) => group.signal('SIGTERM'))
      .filter((group): group is ProcessGroup => group instanceof ProcessGroup)
    const sleeper = new Int32Array(new SharedArrayBuffer(4))
    const deadline = Date.now() + graceMs
    while (alive.length > 0 && Date.now() < deadline) {
      Atomics.wait(sleeper, 0, 0, 5)
      alive = scanGroups(alive)
    }
    for (const group of alive) group.signal('SIGKILL')
    // No timer runs before the process ends: deliver the SIGKILL owed to marked processes now.
    scanGroups(alive)
  }
}
