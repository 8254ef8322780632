/** The watches of one plugin instance: armed per shell, each telling its owner agent through the lanes, all ended at dispose. */
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { echo } from '@gencode-ai/dsh-tool-common'
import type { NoticeDelivery } from '../shells/delivery.ts'
import type { ShellRegistry } from '../shells/registry.ts'
import type { BackgroundShell } from '../shells/shell.ts'
import { compileLinePattern, type LinePattern } from './line-pattern.ts'
import { Watch, type WatchState } from './watch.ts'
import { noticeSummary, renderNotice } from './watch-notice.ts'

/** One notice a second at most; a shell writing only stderr this long with no match is said to have a watch that may not work. */
const RATE_MS = 1000
const QUIET_MS = 60_000

/** The pattern as the call gave it, compiled, and watch_max. */
type ArmedWatch = { source: string, pattern: LinePattern, max: number }

export class Watches {
  private readonly live = new Map<string, Watch>()

  /** `delivery`: the plugin's lanes and wake budget, shared with completion notices; `registry`: keeps each watch in the ledger. */
  constructor(ctx: Context, private readonly delivery: NoticeDelivery, private readonly registry: ShellRegistry) {
    ctx.effect(() => () => {
      for (const watch of this.live.values()) watch.dispose()
      this.live.clear()
    }, 'tool-bash-bg watches')
    registry.onTakenBack((shell, watch, agent) => this.rearm(shell, agent as Agent, watch))
  }

  /**
   * A watch kept in a taken-back shell's record, armed again for the agent that resumed the session: its remaining
   * lines, from the log's end now; what was written while no host ran is named as unwatched (no line is told twice).
   */
  private rearm(shell: BackgroundShell, owner: Agent, saved: WatchState | undefined): void {
    if (saved === undefined || !shell.running) return
    const left = saved.watch_max - saved.delivered
    let pattern: LinePattern
    try {
      pattern = compileLinePattern(saved.pattern, 'watch')
    } catch {
      return
    }
    if (left <= 0) return
    const from = shell.snapshot().bytes
    const gap = from > saved.log_offset ? `; log bytes ${saved.log_offset}-${from} of ${shell.record.output_file}, written while no host ran, were not watched` : ''
    const head = `${shell.record.id} watch ${echo(saved.pattern, 60)} re-armed after a host restart: ${left} of ${saved.watch_max} lines left${gap}.`
    try {
      this.delivery.tell(owner, head, head)
    } catch {}
    this.arm(shell, owner, { source: saved.pattern, pattern, max: left }, undefined, from)
    this.registry.noteWatch(shell)
  }

  /** Armed in the tick the shell started in, so it sees every line from the first. */
  arm(shell: BackgroundShell, owner: Agent, watch: ArmedWatch, timing = { rateMs: RATE_MS, quietMs: QUIET_MS }, from = 0): void {
    const id = shell.record.id
    const keep = (state: WatchState | undefined) => {
      shell.watching = state
      this.registry.noteWatch(shell)
    }
    // In the shell's record from the start (the record is written a moment after the start, with it).
    shell.watching = { pattern: watch.source, watch_max: watch.max, delivered: 0, log_offset: from }
    const armed = new Watch({
      shell, ...watch, ...timing, from, told: keep,
      deliver: (notice) => {
        try {
          this.delivery.tell(owner, renderNotice(notice), noticeSummary(notice))
        } catch {
          // The owner is gone (disposed with its session): nobody is left to tell.
        }
      },
    })
    this.live.set(id, armed)
    void shell.settled.then(() => this.live.delete(id))
  }

  /** What a ledger keeps to re-arm the watch of shell `id` after a host restart; undefined when it has none. */
  state(id: string): WatchState | undefined {
    return this.live.get(id)?.state()
  }
}
