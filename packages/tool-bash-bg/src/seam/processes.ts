// One background shell's process tree in another execution world, seen only through its ctx.subprocess handle:
// the collect-mode readers pumped into two streams, the seam's one stop (terminate()) and its tree wait (waitForExit()).
import { PassThrough } from 'node:stream'
import type { SubprocessHandle, SubprocessOutputReader } from '@deepseek-ai/dsh-subprocess'
import type { KillOutcome, KillRequest, LeaderExit } from '../contract.ts'

/** The readers are pulled: soon after output, backing off while the shell is quiet. */
const MIN_POLL_MS = 20
const MAX_POLL_MS = 250

type Channel = 'stdout' | 'stderr'

/** `graceMs`: the seam's TERM→KILL grace, fixed at spawn; `limits`: what this world cannot promise; the rest the kill policy's. */
type SeamStop = { toolName: string, graceMs: number, afterKillMs: number, settleMs: number, limits: string }

export class SeamProcesses {
  readonly pid: number
  readonly exited: Promise<LeaderExit>
  leaderExit: LeaderExit | undefined
  /** 1 while the tree may hold a process (the seam counts none), 0 once it was observed gone. */
  live = 1
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  private empty = false
  private readonly offsets = { stdout: 0, stderr: 0 }
  private timer: NodeJS.Timeout | undefined
  private interval = MIN_POLL_MS

  constructor(private readonly handle: SubprocessHandle, private readonly stop: SeamStop) {
    this.pid = handle.pid
    // A transport failure after the start is an end without exit facts.
    this.exited = handle.done.then(
      ({ exitCode, signal }) => ({ code: exitCode, signal, at: new Date() }),
      () => ({ code: null, signal: null, at: new Date() }),
    ).then(async (exit) => {
      // So that, once `exited` settles, liveness says whether anything outlived the command's output.
      await this.whenEmpty(stop.settleMs)
      this.leaderExit = exit
      clearTimeout(this.timer)
      // Collected output stays readable after settlement: the last read takes all of it.
      this.pump()
      this.stdout.end()
      this.stderr.end()
      return exit
    })
    void handle.waitForExit().then((gone) => { if (gone) this.markEmpty() }, () => {})
    this.schedule()
  }

  private markEmpty(): void {
    this.empty = true
    this.live = 0
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.interval = this.pump() ? MIN_POLL_MS : Math.min(this.interval * 2, MAX_POLL_MS)
      if (this.leaderExit === undefined) this.schedule()
    }, this.interval).unref()
  }

  /** True when anything new was read. */
  private pump(): boolean {
    return [this.read('stdout'), this.read('stderr')].some(Boolean)
  }

  private read(channel: Channel): boolean {
    const reader: SubprocessOutputReader | undefined = this.handle.collected[channel]
    if (reader === undefined) return false
    let read
    try {
      read = reader.readFrom(this.offsets[channel])
    } catch {
      return false
    }
    const target = this[channel]
    if (read.lossy) {
      // The provider's in-memory tail moved past what was logged: say where the whole stream is, when it kept one.
      const where = read.spillPath === undefined ? 'the provider kept no copy' : `the whole stream is in ${read.spillPath} in that world`
      target.write(`\n[${this.stop.toolName}: ${channel} came faster than it could be logged and some was lost here; ${where}]\n`)
    }
    this.offsets[channel] = read.nextOffset
    if (read.text.length === 0) return false
    target.write(read.text)
    return true
  }

  /** The seam counts no processes: the tree root stands for the tree while it may live. */
  census(): number[] {
    return this.empty ? [] : [this.pid]
  }

  /** Starts the seam's stop (there is no other signal); false when nothing is left. */
  signalNow(_signal: 'SIGTERM' | 'SIGKILL'): boolean {
    if (this.empty) return false
    this.handle.terminate()
    return true
  }

  /** The seam cannot look without yielding: its provider's own exit handling takes over. */
  aliveNow(): boolean {
    return false
  }

  /** The seam's only stop, whatever `request` asks: SIGTERM, the grace set at spawn, SIGKILL. */
  async terminate(_request: KillRequest, onSignalled?: () => void): Promise<KillOutcome> {
    const started = Date.now()
    const outcome = (signal_sent: KillOutcome['signal_sent'], force_killed: boolean, survivors: number[]): KillOutcome => ({
      signal_sent, force_killed, exit_code: this.leaderExit?.code ?? null,
      elapsed_ms: Date.now() - started, timeout_ms: this.stop.graceMs, survivors, world_limits: this.stop.limits,
    })
    if (!this.signalNow('SIGTERM')) return outcome('none', false, [])
    onSignalled?.()
    if (await this.whenEmpty(this.stop.graceMs)) return outcome('SIGTERM', false, [])
    const gone = await this.whenEmpty(this.stop.afterKillMs)
    return outcome('SIGTERM', true, gone ? [] : this.census())
  }

  /** True once the tree is gone, false after `timeoutMs`. */
  async whenEmpty(timeoutMs: number): Promise<boolean> {
    if (this.empty) return true
    const bound = Number.isFinite(timeoutMs) ? AbortSignal.timeout(Math.max(0, timeoutMs)) : undefined
    let gone = false
    try {
      gone = await this.handle.waitForExit(bound)
    } catch {
      gone = false
    }
    if (gone) this.markEmpty()
    return gone
  }
}
