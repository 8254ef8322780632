// Crash leftovers: each host keeps a private record and marks its shells' processes with `DSH_BG_HOST`; the next
// host stops the marked processes of a host proven dead. Dead is proven by a pid whose start time changed within
// one PID namespace, or by the unix socket the host listens on beside its record refusing connections. A dead host
// whose keeper still lives is left alone: the keeper stops its shells at their TTL, or a host of their session takes
// them back.
import { lstatSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { basename, join } from 'node:path'
import type { HostDir, HostRecord } from './host-dir.ts'
import { HOST_MARK, SHELL_MARK, type ProcessCensus } from './proc-census.ts'

/** What the reaper uses of this host: its census, its own directory (never reaped), a SIGKILL owed after the grace. */
type Reaper = { census: ProcessCensus, dir: HostDir, killLater(kill: () => void): void }

function readRecord(file: string): HostRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as HostRecord
    return typeof record.mark === 'string' && record.mark.startsWith(`${HOST_MARK}=`) && Array.isArray(record.shells)
      && typeof record.pidns === 'string' ? record : undefined
  } catch {
    return undefined
  }
}

function existsSocket(file: string): boolean {
  try {
    return lstatSync(file).isSocket()
  } catch {
    return false
  }
}

/** Whether a connect to the host's socket is refused (no listener: dead); false when it answers or cannot tell. */
function socketRefused(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(file)
    const done = (refused: boolean) => { socket.destroy(); resolve(refused) }
    socket.once('connect', () => done(false))
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'))
    socket.setTimeout(2000, () => done(false))
  })
}

type Candidate = { file: string, record: HostRecord }

/** Records of other hosts: whether each is already proven dead without a connect, and whether its keeper still lives. */
function candidates(own: Reaper, base: string): Array<Candidate & { judged: boolean, dead: boolean, guarded: boolean }> {
  let entries: string[]
  try {
    entries = readdirSync(base)
  } catch {
    return []
  }
  const found = []
  for (const entry of entries) {
    const file = join(base, entry)
    const record = entry.endsWith('.json') ? readRecord(file) : undefined
    if (record === undefined || record.mark === `${HOST_MARK}=${own.dir.name}`) continue
    // Within one PID namespace (an unreadable one proves nothing), a pid whose process has another start time
    // (or none) is not the host any more.
    const sameNamespace = record.pidns !== '' && record.pidns === own.dir.pidns
    const keeper = record.keeper
    const guarded = sameNamespace && keeper !== undefined && own.census.startTime(keeper.pid) === keeper.start
    found.push({ file, record, judged: sameNamespace, dead: sameNamespace && own.census.startTime(record.pid) !== record.start, guarded })
  }
  return found
}

/** SIGTERM what carries `record`'s host mark (but the shells in `spared`), SIGKILL after the grace; how many shells had one. */
function stopMarked(record: HostRecord, own: Reaper, spared: ReadonlySet<string>): number {
  const targets = [{ pgid: 0, leaderStart: record.start, group: false, marks: [record.mark] }]
  const shellOf = (pid: number) => own.census.sys.environ(pid)?.split('\0').find((item) => item.startsWith(`${SHELL_MARK}=`))?.slice(SHELL_MARK.length + 1)
  const marked = () => (own.census.scan(targets)[0]?.marked ?? []).filter((pid) => !spared.has(shellOf(pid) ?? ''))
  const pids = marked()
  const stopped = new Set(pids.map((pid) => shellOf(pid) ?? String(pid))).size
  for (const pid of pids) own.census.sys.signal(pid, 'SIGTERM')
  if (pids.length > 0) own.killLater(() => { for (const pid of marked()) own.census.sys.signal(pid, 'SIGKILL') })
  return stopped
}

/**
 * A dead host whose keeper lives: its keeper keeps the shells of a session for their TTL (the record's `kept`), and
 * its directory; only the rest, which no session can take back, are stopped.
 */
function reapUnkept({ record }: Candidate, own: Reaper): number {
  return stopMarked(record, own, new Set(record.kept ?? []))
}

/**
 * Claim a dead host's record by renaming it (one host wins), stop the processes carrying its mark (the record may lag
 * the last launch) and remove its directory. Returns how many shells had one.
 */
function reap({ file }: Candidate, own: Reaper): number {
  const claimed = `${file.slice(0, -'.json'.length)}.claimed-${basename(own.dir.logDir)}`
  try {
    renameSync(file, claimed)
  } catch {
    return 0
  }
  const record = readRecord(claimed)
  const dir = file.slice(0, -'.json'.length)
  const stopped = record === undefined ? 0 : stopMarked(record, own, new Set())
  rmSync(dir, { recursive: true, force: true })
  rmSync(`${dir}.sock`, { force: true })
  rmSync(`${dir}.keeper`, { force: true })
  rmSync(claimed, { force: true })
  return stopped
}

/** Stop the shells of hosts proven dead by pid and start time (synchronous: at boot, before any shell starts). */
export function reapLeftovers(own: Reaper): number {
  const { base } = own.dir
  if (base === undefined) return 0
  let stopped = 0
  for (const candidate of candidates(own, base)) {
    if (candidate.dead) stopped += candidate.guarded ? reapUnkept(candidate, own) : reap(candidate, own)
  }
  return stopped
}

/** Hosts pid and start cannot judge (another PID namespace): dead only when their socket refuses a connect; none: never. */
export async function reapBySocket(own: Reaper): Promise<number> {
  const { base } = own.dir
  if (base === undefined) return 0
  let stopped = 0
  for (const candidate of candidates(own, base)) {
    // Within the namespace, a pid with its start time is proof of life.
    if (candidate.judged) continue
    const socket = `${candidate.file.slice(0, -'.json'.length)}.sock`
    if (!existsSocket(socket) || !await socketRefused(socket)) continue
    // A keeper that answers guards the dead host's kept shells.
    const keeper = candidate.record.keeper?.socket
    const guarded = keeper !== undefined && existsSocket(keeper) && !await socketRefused(keeper)
    stopped += guarded ? reapUnkept(candidate, own) : reap(candidate, own)
  }
  return stopped
}
