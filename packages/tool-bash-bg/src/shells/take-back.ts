/**
 * Resume: a host that serves a session with ledger records takes back its shells before the session's first step.
 * Each record of the session is proven (same PID namespace, its leader's pid still the same process by start time and
 * ours by uid, or its cgroup still holding something) and then: still running → registered again under its shell id;
 * ended meanwhile → its exit status from the shell side's exit file; gone with none → interrupted. The model is told
 * once, in one injected notice (no wake spent), and each completion in it is delivered exactly once.
 */
import { readFileSync, statSync } from 'node:fs'
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Ledger, LedgerPatch, LedgerRecord } from '../local/ledger.ts'
import { eventsOf, type NoticeDelivery } from './delivery.ts'
import { notTakenBack, resumeLine, retellLine } from './notices.ts'

/** What the resume reads of the keeper's exit file: the end, and whether the keeper stopped it at its TTL. */
interface ExitRecord {
  code: number | null
  signal: string | null
  endedAt: number
  ttlKilled?: true
}

export interface TakeBackOptions {
  ledger: () => Ledger | undefined
  delivery: NoticeDelivery
  /** This host's PID namespace: a record of another is never proven, touched or told. */
  pidns: string
  /** A pid's start time now (undefined when no such process). */
  startTime: (pid: number) => number | undefined
  /** Whether a record's cgroup still holds a process. */
  cgroupPopulated: (cgroup: string) => boolean
  /** Claim the session for this host (false: another live host serves it, and this one takes nothing). */
  claim: (session: string) => boolean
  /** Whether this host's registry already holds the shell (it started it, or took it back before): never taken twice. */
  known: (shellId: string) => boolean
  /** Register a proven running shell again (a host job, the registry); its log size, or undefined when it could not be. */
  adopt: (agent: Agent, record: LedgerRecord) => Promise<{ bytes: number } | undefined>
  /** The take-back of a session is under way until `gate` settles (its /tasks and stops wait for it). */
  underWay: (session: string, gate: Promise<void>) => void
}

/** The shell side's record of the end, when it wrote one. */
function readExit(file: string): ExitRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ExitRecord>
    if (typeof parsed.endedAt !== 'number') return undefined
    return {
      code: typeof parsed.code === 'number' ? parsed.code : null, signal: typeof parsed.signal === 'string' ? parsed.signal : null,
      endedAt: parsed.endedAt, ...parsed.ttlKilled === true ? { ttlKilled: true } : {},
    }
  } catch {
    return undefined
  }
}

/** Owned by this user: /proc/<pid> belongs to the process's real owner. */
function ownedByUs(pid: number): boolean {
  const uid = process.getuid?.()
  try {
    return uid === undefined || statSync(`/proc/${pid}`).uid === uid
  } catch {
    return false
  }
}

export class TakeBack {
  /** The take-back of each resumed session, awaited by its first step. */
  private readonly gates = new Map<string, Promise<void>>()
  /** The notices each session's take-back handed over: a step that waited for it takes them in (see the pre-step). */
  private readonly told = new Map<string, Set<string>>()

  constructor(private readonly options: TakeBackOptions) {}

  /** Listen for the sessions `ctx` resumes, and hold each one's first step until its shells are taken back. */
  listen(ctx: Context): void {
    ctx.on('agent/session-start', ({ agent, source }) => {
      // 0.1.7's headless runner adopts a session without saying `resume`: a startup with history counts too (a
      // clear or a compaction continues a session this host already serves).
      if (source !== 'resume' && (source !== 'startup' || eventsOf(agent.session).length === 0)) return
      const gate = this.run(agent).catch(() => {})
      this.gates.set(agent.id, gate)
      this.options.underWay(agent.id, gate)
    })
    ctx.on('agent/pre-step', async ({ agent }, next) => {
      const gate = this.gates.get(agent.id)
      if (gate === undefined) return next()
      await gate
      this.gates.delete(agent.id)
      const decision = await next()
      const told = this.told.get(agent.id) ?? new Set<string>()
      this.told.delete(agent.id)
      // The step claimed its inbox before it waited: a notice injected meanwhile enters this step, first, not the next.
      const late = agent.inbox.nextStep.filter((message) => told.has(message.id))
      if (decision.kind !== 'enter' || late.length === 0) return decision
      for (const message of late) agent.inbox.remove(message.id)
      return { kind: 'enter', messages: [...late, ...decision.messages] }
    })
    ctx.on('agent/disposed', ({ agent }) => {
      this.gates.delete(agent.id)
      this.told.delete(agent.id)
    })
  }

  /** Whether the record's shell still runs: in our PID namespace, its leader the same process and ours, or its cgroup not empty. */
  private alive(record: LedgerRecord): boolean {
    const same = this.options.startTime(record.pid) === record.pidStart && ownedByUs(record.pid)
    return same || (record.cgroup !== undefined && this.options.cgroupPopulated(record.cgroup))
  }

  /** Take back `agent`'s shells and tell it once. */
  async run(agent: Agent): Promise<void> {
    const ledger = this.options.ledger()
    if (ledger === undefined) return
    const { delivery } = this.options
    // Never someone else's: the session's directory holds only its records, and another namespace's pids prove nothing.
    const records = ledger.list(agent.id)
      .filter((record) => record.session === agent.id && record.pidns === this.options.pidns && !this.options.known(record.shellId))
    if (records.length === 0 || !this.options.claim(agent.id)) return
    const handed = new Set<string>()
    this.told.set(agent.id, handed)
    delivery.recover(agent, records.filter((record) => record.delivery !== undefined), (group, messageId) => {
      handed.add(delivery.send(agent, group, group.map((record) => retellLine(record, Date.now())), false, messageId))
    })
    const now = Date.now()
    const running: string[] = []
    const ended: LedgerRecord[] = []
    const unattended = new Set<string>()
    for (const record of records) {
      if (record.delivery !== undefined) continue
      if (record.state !== 'running') {
        ended.push(record)
        continue
      }
      if (this.alive(record)) {
        const adopted = await this.options.adopt(agent, record).catch(() => undefined)
        // Not taken back (the keeper refused it, another host holds it): still running, so never called ended.
        running.push(adopted === undefined ? notTakenBack(record) : resumeLine(record, now, adopted.bytes))
        continue
      }
      const exit = readExit(record.exitFile)
      const patch: LedgerPatch = exit === undefined
        ? { state: 'interrupted' }
        : { state: exit.ttlKilled === true ? 'killed' : 'ended', exitCode: exit.code, signal: exit.signal, endedAt: exit.endedAt }
      ended.push(ledger.update(agent.id, record.shellId, patch) ?? { ...record, ...patch })
      unattended.add(record.shellId)
    }
    if (ended.length === 0 && running.length === 0) return
    const lines = [...running, ...ended.map((record) => resumeLine(record, now, 0, unattended.has(record.shellId)))]
    handed.add(delivery.send(agent, ended, lines, false))
  }
}
