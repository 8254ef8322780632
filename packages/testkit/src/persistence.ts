// A real, durable session persistence for tests that resume: one plain JSON-lines file per session (the header, then
// one event a line), appended with fsync, behind the host's own PersistenceCoordinator. The dsh CLI's jsonl backend is
// not an installed package; this one keeps the same contract (a batch is durable when append resolves), so a host
// SIGKILLed mid-session leaves what the next host resumes.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { SessionEvent, SessionHeader, SessionId } from '@deepseek-ai/dsh-session'
import {
  PersistenceCoordinator, SessionPersistence, SessionPersistenceRevision,
  type PersistenceBackend, type SessionInspection, type SessionLocation,
} from '@deepseek-ai/dsh-session-persistence'

const fileName = (id: string) => `${Buffer.from(id).toString('hex')}.jsonl`

class FileBackend implements PersistenceBackend<never> {
  readonly name = 'testkit-jsonl'

  constructor(private readonly root: string) {
    mkdirSync(root, { recursive: true })
  }

  private path(id: string): string {
    return join(this.root, fileName(id))
  }

  /** Whole lines only: a torn last line (a crash mid-write) is not an event. */
  private read(id: string): { meta: SessionHeader, events: SessionEvent[] } | undefined {
    let text: string
    try {
      text = readFileSync(this.path(id), 'utf8')
    } catch {
      return undefined
    }
    const lines = text.split('\n')
    lines.pop()
    const [header, ...events] = lines.map((line) => JSON.parse(line) as unknown)
    return header === undefined ? undefined : { meta: header as SessionHeader, events: events as SessionEvent[] }
  }

  revision(id: string): SessionPersistenceRevision | undefined {
    try {
      const stat = statSync(this.path(id))
      return SessionPersistenceRevision(`${this.name}:${stat.size}:${stat.mtimeMs}`)
    } catch {
      return undefined
    }
  }

  loadStored(id: SessionId) {
    const revision = this.revision(id)
    const stored = this.read(id)
    return Promise.resolve(stored === undefined || revision === undefined ? undefined : { ...stored, revision })
  }

  readStoredRevision(id: SessionId) {
    return Promise.resolve(this.revision(id))
  }

  private write(id: string, lines: readonly unknown[]): void {
    const fd = openSync(this.path(id), 'a', 0o600)
    try {
      writeSync(fd, lines.map((line) => `${JSON.stringify(line)}\n`).join(''))
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  appendBatch(meta: SessionHeader, events: readonly SessionEvent[], isMaterialized: boolean) {
    this.write(meta.id, isMaterialized ? events : [meta, ...events])
    return Promise.resolve()
  }

  commitRepair(meta: SessionHeader, _torn: undefined, closers: readonly SessionEvent[]) {
    if (closers.length > 0) this.write(meta.id, closers)
    return Promise.resolve()
  }

  list() {
    const headers = readdirSync(this.root).filter((file) => file.endsWith('.jsonl'))
      .map((file) => this.read(Buffer.from(file.slice(0, -'.jsonl'.length), 'hex').toString())?.meta)
    return Promise.resolve(headers.filter((meta) => meta !== undefined))
  }

  locate(meta: SessionHeader): SessionLocation {
    return { kind: 'jsonl', path: this.path(meta.id) }
  }
}

/** `ctx.sessionPersistence` over plain JSON-lines files under `root` (mount it with `ctx.plugin(FilePersistence, { root })`). */
export class FilePersistence extends SessionPersistence {
  static readonly inject = ['sessions']
  readonly supportsRawArtifacts = false
  private readonly backend: FileBackend
  private readonly coordinator: PersistenceCoordinator<never>

  constructor(ctx: Context, config: { root: string }) {
    super(ctx)
    this.backend = new FileBackend(config.root)
    // A short batch window: a test's crash point is reached soon after the events it needs are durable.
    this.coordinator = new PersistenceCoordinator(ctx, this.backend, { preparedSessionCacheSize: 5, writeBatchMaxDelayMs: 1 })
  }

  locate(meta: SessionHeader): SessionLocation {
    return this.backend.locate(meta)
  }

  create(meta: SessionHeader): Promise<void> {
    return this.coordinator.create(meta)
  }

  append(id: SessionId, events: readonly SessionEvent[]): Promise<void> {
    return this.coordinator.append(id, events)
  }

  override prepare(id: SessionId, signal?: AbortSignal) {
    return this.coordinator.prepare(id, signal)
  }

  load(id: SessionId): Promise<SessionInspection> {
    return this.coordinator.load(id)
  }

  inspect(id: SessionId, signal?: AbortSignal): Promise<SessionInspection> {
    return this.coordinator.inspect(id, signal)
  }

  readFrom(id: SessionId, fromSeq: number, signal?: AbortSignal) {
    return this.coordinator.readFrom(id, fromSeq, signal)
  }

  list(): Promise<SessionHeader[]> {
    return this.backend.list()
  }

  async listSnapshots() {
    const headers = await this.backend.list()
    return headers.flatMap((header) => {
      const revision = this.backend.revision(header.id)
      return revision === undefined ? [] : [{ header, revision }]
    })
  }
}
