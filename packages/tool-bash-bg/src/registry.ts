/**
 * The `backgroundShells` service: every shell this plugin started, by id, with its live
 * process group behind it. kill_shell and read_file reach shells only through it.
 */
import { randomInt } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { BackgroundShell } from './background.ts'
import type { HostDir } from './leftovers.ts'
import { liveness } from './liveness.ts'
import { protectedPids, scanShells } from './process-group.ts'
import type { BackgroundShellRegistry, KillOutcome, KillRequest, ShellRecord } from './registry-types.ts'
import { DEFAULT_KILL } from './terminate.ts'

const HOUR_MS = 60 * 60 * 1000
const SAVE_DELAY_MS = 200
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

interface Entry {
  record: ShellRecord
  shell?: BackgroundShell
}

export class ShellRegistry implements BackgroundShellRegistry {
  private readonly entries = new Map<string, Entry>()
  defaultKill: KillRequest = DEFAULT_KILL
  stopTool: string | undefined
  /** Said once by /tasks: the shells of dead hosts this one stopped at start. */
  leftoverNotice: string | undefined
  readonly logDir: string
  private saving: NodeJS.Timeout | undefined

  constructor(private readonly host: HostDir) {
    this.logDir = host.logDir
  }

  /** `DSH_BG_HOST=…`: this host's mark, on every process of its shells. */
  get hostMark(): string {
    return this.host.mark
  }

  /**
   * Keep the crash record's list in step with the running shells, off the launch path (a
   * sync file write, at most one per `SAVE_DELAY_MS`). Crash cleanup does not depend on it: it
   * goes by the host mark.
   */
  private saveRunning(): void {
    if (this.saving !== undefined) return
    this.saving = setTimeout(() => {
      this.saving = undefined
      this.host.save([...this.entries.values()].filter((entry) => entry.shell !== undefined && entry.record.status === 'running').map((entry) => entry.record.id))
    }, SAVE_DELAY_MS)
    this.saving.unref()
  }

  /** A fresh `bg-xxxxxx` id no shell of this registry has. */
  newId(): string {
    for (;;) {
      let id = 'bg-'
      for (let i = 0; i < 6; i++) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)]
      if (!this.entries.has(id)) return id
    }
  }

  register(record: ShellRecord): void {
    if (this.entries.has(record.id)) throw new HarnessError(`shell ${record.id} is already registered — pick a new id`, 'SHELL_EXISTS')
    this.prune()
    this.entries.set(record.id, { record })
  }

  /** Register a shell this plugin started, with its process group. */
  track(shell: BackgroundShell): void {
    this.register(shell.record)
    const entry = this.entries.get(shell.record.id)
    if (entry !== undefined) entry.shell = shell
    this.saveRunning()
    void shell.settled.then(() => this.saveRunning())
  }

  liveness(record: ShellRecord): string {
    return liveness(record, Date.now())
  }

  private view(entry: Entry | undefined): ShellRecord | undefined {
    return entry?.shell?.sync() ?? entry?.record
  }

  get(id: string): ShellRecord | undefined {
    return this.view(this.entries.get(id))
  }

  find(idOrJobId: string): ShellRecord | undefined {
    return this.get(idOrJobId) ?? this.list().find((record) => record.job_id === idOrJobId)
  }

  list(): ShellRecord[] {
    return [...this.entries.values()].map((entry) => this.view(entry) as ShellRecord)
  }

  running(owner?: string): ShellRecord[] {
    return this.list().filter((record) => record.status === 'running' && (owner === undefined || record.owner === owner))
  }

  /**
   * Drop a finished shell's record and its log; false for a running or unknown shell. The log
   * goes too: once the record is gone, prune can no longer find it, and it would stay on disk
   * until the plugin stops.
   */
  remove(id: string): boolean {
    const entry = this.entries.get(id)
    if (entry === undefined || entry.record.status === 'running') return false
    this.entries.delete(id)
    this.removeLog(entry.record.output_file)
    return true
  }

  prune(maxAgeMs = HOUR_MS): number {
    const cutoff = Date.now() - maxAgeMs
    let pruned = 0
    for (const [id, { record }] of this.entries) {
      if (record.status === 'running' || record.ended_at === null || Date.parse(record.ended_at) > cutoff) continue
      this.entries.delete(id)
      this.removeLog(record.output_file)
      pruned++
    }
    return pruned
  }

  /**
   * Delete a log, but only one of ours: register() takes records from other plugins, whose
   * output_file may be any path — dropping their record must never delete that file.
   */
  private removeLog(path: string): void {
    if (dirname(resolve(path)) !== this.logDir) return
    rmSync(path, { force: true })
  }

  terminate(id: string, request: KillRequest): Promise<KillOutcome> {
    const entry = this.entries.get(id)
    if (entry === undefined) return Promise.reject(new HarnessError(`Shell not found: ${id}`, 'SHELL_NOT_FOUND'))
    // A corrupt or forged record must never aim a signal at the host or its ancestors.
    const { pid } = entry.record
    if (!Number.isSafeInteger(pid) || pid <= 1 || protectedPids().has(pid)) {
      return Promise.reject(new HarnessError(
        `refusing to signal shell ${id}: pid ${pid} is the host process, its process group, or one of its ancestors — the shell registry is inconsistent; restart the host`,
        'SHELL_PROTECTED_PID',
      ))
    }
    if (entry.shell === undefined) {
      return Promise.resolve({ signal_sent: 'none', force_killed: false, exit_code: entry.record.exit_code, elapsed_ms: 0, timeout_ms: 0, survivors: [] })
    }
    return entry.shell.terminate(request)
  }

  settled(id: string): Promise<ShellRecord> {
    const entry = this.entries.get(id)
    if (entry === undefined) return Promise.reject(new HarnessError(`Shell not found: ${id}`, 'SHELL_NOT_FOUND'))
    return entry.shell?.settled ?? Promise.resolve(entry.record)
  }

  members(id: string): number[] {
    return this.entries.get(id)?.shell?.group.members() ?? []
  }

  survivors(id: string): number[] {
    return this.entries.get(id)?.shell?.group.census() ?? []
  }

  /** Kill every running shell and wait for each to settle (plugin dispose). */
  async terminateAll(request: KillRequest): Promise<void> {
    const live = [...this.entries.values()].flatMap((entry) => entry.shell !== undefined && entry.record.status === 'running' ? [entry.shell] : [])
    await Promise.all(live.map((shell) => shell.terminate(request)))
  }

  /**
   * Kill every running shell without yielding to the event loop (process exit): SIGTERM, up
   * to `graceMs` for them to empty, then SIGKILL what is left. One /proc pass a poll for all.
   */
  terminateAllSync(graceMs: number): void {
    const live = [...this.entries.values()].flatMap((entry) => entry.shell !== undefined && entry.record.status === 'running' ? [entry.shell.group] : [])
    let alive = live.filter((group) => group.signal('SIGTERM'))
    const sleeper = new Int32Array(new SharedArrayBuffer(4))
    const deadline = Date.now() + graceMs
    while (alive.length > 0 && Date.now() < deadline) {
      Atomics.wait(sleeper, 0, 0, 5)
      const looking = alive.flatMap((group) => {
        const target = group.target()
        return target === undefined ? [] : [{ group, target }]
      })
      const found = scanShells(looking.map((each) => each.target))
      alive = looking.filter((each, i) => {
        const result = each.group.observe(found[i] ?? { group: [], marked: [] })
        // An unreaped (zombie) leader is not counted: the blocked event loop cannot reap it.
        return result.group.length + result.marked.length > 0
      }).map((each) => each.group)
    }
    for (const group of alive) group.signal('SIGKILL')
    // No timer runs before the process ends: deliver the SIGKILL owed to marked processes now.
    const last = alive.flatMap((group) => {
      const target = group.target()
      return target === undefined ? [] : [{ group, target }]
    })
    scanShells(last.map((each) => each.target)).forEach((found, i) => last[i]?.group.observe(found))
  }
}
