/** The watches of one plugin instance: armed per shell, each telling its owner agent through the lanes, all ended at dispose. */
import type { Context } from '@deepseek-ai/cordis'
import type { BackgroundShell } from '../shells/shell.ts'
import type { LinePattern } from './line-pattern.ts'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { NoticeDelivery } from '../shells/delivery.ts'
import { Watch, type WatchState } from './watch.ts'
import { noticeSummary, renderNotice } from './watch-notice.ts'

/** One notice a second at most; a shell writing only stderr this long with no match is said to have a watch that may not work. */
const RATE_MS = 1000
const QUIET_MS = 60_000

/** The pattern as the call gave it, compiled, and watch_max. */
type ArmedWatch = { source: string, pattern: LinePattern, max: number }

export class Watches {
  private readonly live = new Map<string, Watch>()

  /** `delivery`: the plugin's lanes and wake budget, shared with completion notices. */
  constructor(ctx: Context, private readonly delivery: NoticeDelivery) {
    ctx.effect(() => () => {
      for (const watch of this.live.values()) watch.dispose()
      this.live.clear()
    }, 'tool-bash-bg watches')
  }

  /** Armed in the tick the shell started in, so it sees every line from the first. */
  arm(shell: BackgroundShell, owner: Agent, watch: ArmedWatch, timing = { rateMs: RATE_MS, quietMs: QUIET_MS }): void {
    const id = shell.record.id
    const armed = new Watch({
      shell, ...watch, ...timing,
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
