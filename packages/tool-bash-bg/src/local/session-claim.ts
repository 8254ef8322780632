// Which host serves a session's shells: a claim file in the session's ledger directory, made with O_EXCL, naming the
// host (pid, start time, PID namespace, and its directory's name: two hosts in one process differ by it). Of two hosts
// taking back one session's shells at once, one makes the file and takes them; the other sees a live holder and takes
// nothing. A claim whose holder is proven gone (same namespace, start time changed) is stale and replaced.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/** A host as a claim names it. */
export interface Claimant {
  pid: number
  start: number
  pidns: string
  host: string
}

const CLAIM = 'host.claim'

export class SessionClaims {
  /** The directories this host holds a claim in, released at dispose. */
  private readonly held = new Set<string>()

  constructor(private readonly me: Claimant, private readonly startTime: (pid: number) => number | undefined) {}

  private read(dir: string): Claimant | undefined {
    try {
      return JSON.parse(readFileSync(join(dir, CLAIM), 'utf8')) as Claimant
    } catch {
      return undefined
    }
  }

  private mine(claim: Claimant | undefined): boolean {
    return claim?.host === this.me.host && claim.pid === this.me.pid && claim.start === this.me.start
  }

  /** Gone for certain: in this namespace, its pid no longer the process that claimed (another namespace's never is). */
  private gone(claim: Claimant): boolean {
    return claim.pidns === this.me.pidns && this.startTime(claim.pid) !== claim.start
  }

  /** Claim the session whose ledger directory is `dir`: true when this host holds it now (made, already ours, or stale replaced). */
  take(dir: string): boolean {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(join(dir, CLAIM), 'wx', 0o600)
        try {
          writeSync(fd, JSON.stringify(this.me))
        } finally {
          closeSync(fd)
        }
        this.held.add(dir)
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false
      }
      const claim = this.read(dir)
      if (this.mine(claim)) return true
      // A claim being written reads as nothing for a moment: only a whole one proven gone is replaced.
      if (claim === undefined || !this.gone(claim)) return false
      rmSync(join(dir, CLAIM), { force: true })
    }
    return false
  }

  /** Let go of every claim this host made (plugin dispose, host exit). */
  release(): void {
    for (const dir of this.held) if (this.mine(this.read(dir))) rmSync(join(dir, CLAIM), { force: true })
    this.held.clear()
  }
}
