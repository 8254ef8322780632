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
