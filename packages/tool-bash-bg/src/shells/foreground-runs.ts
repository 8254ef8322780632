/**
 * Foreground runs in progress, tracked as the registry tracks background shells: at plugin dispose each run's signal
 * aborts, so it stops its processes and its call is answered; at host exit its processes are signalled without
 * yielding, with the shells'.
 */
import { HarnessError } from '@deepseek-ai/dsh-llm'
import type { ExitTarget } from '../local/host.ts'

/** One run: what host exit stops once its processes started, and its end (never rejecting). */
interface Tracked {
  target?: ExitTarget
  ended: Promise<void>
}

export class ForegroundRuns {
  private readonly stopping = new AbortController()
  private readonly runs = new Set<Tracked>()
  /** The last start's turn: starts go one per turn of the event loop. */
  private turns: Promise<void> = Promise.resolve()

  constructor(private readonly toolName: string) {}

  /**
   * `body` runs under a signal that aborts with the call's or at dispose, and names its processes by `started`. A run
   * the dispose stopped is refused with ABORTED saying so; one the call aborted returns as it ended.
   */
  async run<T extends { aborted: boolean }>(
    signal: AbortSignal, body: (signal: AbortSignal, started: (target: ExitTarget) => void) => Promise<T>,
  ): Promise<T> {
    let end: (() => void) | undefined
    const ended = new Promise<void>((resolve) => { end = resolve })
    const tracked: Tracked = { ended }
    this.runs.add(tracked)
    try {
      await this.turn()
      const result = await body(AbortSignal.any([signal, this.stopping.signal]), (target) => { tracked.target = target })
      if (!result.aborted || signal.aborted) return result
      throw new HarnessError(
        `${this.toolName}: the command was stopped because the plugin stopped (host shutdown or reload); run it again once the host is back`,
        'ABORTED',
      )
    } finally {
      this.runs.delete(tracked)
      end?.()
    }
  }

  /**
   * Resolves in a turn of the event loop of its own, after every earlier start's: a spawn (and a local run's cgroup and
   * /proc set-up) is synchronous, so a burst of calls started in one turn would hold the loop for all of them at once.
   */
  private turn(): Promise<void> {
    const mine = this.turns.then(() => new Promise<void>((resolve) => setImmediate(resolve)))
    this.turns = mine
    return mine
  }

  /** What host exit stops: every run's processes. */
  exitTargets(): ExitTarget[] {
    return [...this.runs].flatMap((run) => run.target === undefined ? [] : [run.target])
  }

  /** Plugin dispose: every run aborted (a later one at once), awaited to its end. */
  async stopAll(): Promise<void> {
    this.stopping.abort()
    await Promise.all([...this.runs].map((run) => run.ended))
  }
}
