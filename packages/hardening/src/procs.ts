// Probes of the real world from /proc: which processes carry a spec's marker, how many descriptors the host holds.
/**
 * Probes of the real world, from /proc (Linux): which processes carry our marker, how many
 * file descriptors the host holds. Never ask the registry what /proc can answer.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** The env var every process a spec spawns inherits: its value is unique to the spec file. */
const MARK_VAR = 'HARDENING_MARK'

/** Set a fresh marker in this process's env (inherited by everything spawned after). */
export function markChildren(label: string): string {
  const mark = `hmark_${label}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  process.env[MARK_VAR] = mark
  return mark
}

function stateOf(pid: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return stat.slice(stat.lastIndexOf(')') + 2)[0]
  } catch {
    return undefined
  }
}

/** Live (non-zombie) pids, other than this process, whose environment carries `mark`. */
export function markedPids(mark: string): number[] {
  const needle = `${MARK_VAR}=${mark}\0`
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    let environ: string
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1')
    } catch {
      continue
    }
    if (!environ.includes(needle)) continue
    const state = stateOf(entry)
    if (state !== undefined && state !== 'Z' && state !== 'X') found.push(Number(entry))
  }
  return found.sort((a, b) => a - b)
}

/** Open file descriptors of this process. */
export function fdCount(): number {
  return readdirSync('/proc/self/fd').length
}

/** Wait until `check` holds, polling; the bound only stops a hung test (no timing assertion). */
export async function until(check: () => boolean, what: string, boundMs = 20_000): Promise<void> {
  const deadline = Date.now() + boundMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A shell-safe single-quoted word: the string is data, never code. */
export function sq(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

/** Live pids whose command line holds `token` (a command's odd argument no other process carries), other than this process. */
export function pidsWithToken(token: string): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).flatMap((entry) => {
    try {
      const state = stateOf(entry)
      return state !== undefined && state !== 'Z' && state !== 'X' && readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(token) ? [Number(entry)] : []
    } catch {
      return []
    }
  })
}

/** A number no other process's command line holds: a sleep's duration that /proc can be searched for. */
export function uniqueToken(): string {
  return `${600 + Math.floor(Math.random() * 300)}.${Math.floor(Math.random() * 1e6)}`
}
