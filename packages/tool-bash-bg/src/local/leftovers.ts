// Crash leftovers: each host keeps a private record and marks its shells' processes with `DSH_BG_HOST`; the next
// host stops the marked processes of a host proven dead. Dead is proven by a pid whose start time changed within
// one PID namespace, or by the unix socket the host listens on beside its record refusing connections.
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

/** Records of other hosts, and whether each is already proven dead without a connect. */
function candidates(own: Reaper, base: string): Array<Candidate & { judged: boolean, dead: boolean }> {
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
    found.push({ file, record, judged: sameNamespace, dead: sameNamespace && own.census.startTime(record.pid) !== record.start })
  }
  return found
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
  let stopped = 0
  if (record !== undefined) {
    const targets = [{ pgid: 0, leaderStart: record.start, group: false, marks: [record.mark] }]
    const marked = () => own.census.scan(targets)[0]?.marked ?? []
    const pids = marked()
    const shellOf = (pid: number) => own.census.sys.environ(pid)?.split('\0').find((item) => item.startsWith(`${SHELL_MARK}=`)) ?? String(pid)
    stopped = new Set(pids.map(shellOf)).size
    for (const pid of pids) own.census.sys.signal(pid, 'SIGTERM')
    if (pids.length > 0) own.killLater(() => { for (const pid of marked()) own.census.sys.signal(pid, 'SIGKILL') })
  }
  rmSync(dir, { recursive: true, force: true })
  rmSync(`${dir}.sock`, { force: true })
  rmSync(claimed, { force: true })
  return stopped
}

/** Stop the shells of hosts proven dead by pid and start time (synchronous: at boot, before any shell starts). */
export function reapLeftovers(own: Reaper): number {
  const { base } = own.dir
  if (base === undefined) return 0
  let stopped = 0
  for (const candidate of candidates(own, base)) if (candidate.dead) stopped += reap(candidate, own)
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
    let isSocket = false
    try {
      isSocket = lstatSync(socket).isSocket()
    } catch {}
    if (isSocket && await socketRefused(socket)) stopped += reap(candidate, own)
  }
  return stopped
}
