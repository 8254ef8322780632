// Crash leftovers: each host keeps a private record and marks its shells' processes with `DSH_BG_HOST`; the next
// host stops the marked processes of a host proven dead. Dead is proven by a pid whose start time changed within
// one PID namespace, or by the unix socket the host listens on beside its record refusing connections.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { envValue, HOST_MARK, scanShells, SHELL_MARK, startTimeOf } from './proc-census.ts'
import { noLog } from '../shells/log-writer.ts'
import { hostSyscalls } from './syscalls.ts'

/** Between SIGTERM and SIGKILL. */
const LEFTOVER_GRACE_MS = 1000
/** sockaddr_un's path limit, its NUL included: a longer path gets no socket (liveness then rests on pid and start). */
const MAX_SOCKET_PATH = 107

/** `pidns` names the PID namespace `pid` belongs to: a pid from another namespace says nothing about this one's processes. */
type HostRecord = { pid: number, start: number, pidns: string, mark: string, shells: string[] }

/** This process's PID namespace (`pid:[4026531836]`), or '' where it cannot be read. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    return ''
  }
}

/** This host's private 0700 log directory, its `DSH_BG_HOST=…` mark, and its crash record. */
export type HostDir = ReturnType<typeof openHostDir>

/** Why `dir` (ours alone, 0700) cannot be used, or undefined when it can: re-created when it vanished. */
export function privateDirProblem(dir: string): string | undefined {
  const uid = process.getuid?.()
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const stat = lstatSync(dir)
    if (!stat.isDirectory()) return 'not a directory'
    if (uid !== undefined && stat.uid !== uid) return `owned by uid ${stat.uid}`
    if ((stat.mode & 0o077) !== 0) return `mode ${(stat.mode & 0o777).toString(8)}, open to others`
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error)
  }
  return undefined
}

/** The per-user base directory, when it is ours alone (else crash records are not kept). */
function privateBase(): string | undefined {
  const uid = process.getuid?.()
  if (uid === undefined) return undefined
  const base = join(tmpdir(), `dsh-bash-bg-${uid}`)
  try {
    mkdirSync(base, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined
  }
  const stat = lstatSync(base)
  // Someone else's directory, a symlink, or one others can write: never trust its records.
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) return undefined
  return realpathSync(base)
}

export function openHostDir() {
  const base = privateBase()
  const parent = base ?? tmpdir()
  let logDir: string
  try {
    // mkdtemp creates it 0700, outside any workspace.
    logDir = realpathSync(mkdtempSync(base === undefined ? join(parent, 'dsh-bash-bg-') : join(base, 'host-')))
  } catch (error) {
    throw noLog(parent, (error as NodeJS.ErrnoException).code ?? String(error))
  }
  const mark = `${HOST_MARK}=${basename(logDir)}`
  const recordFile = `${logDir}.json`
  const start = startTimeOf(process.pid) ?? 0
  const pidns = pidNamespace()
  const socketFile = `${logDir}.sock`
  // Alive while this process is: a connect refused proves the host dead, across PID and network namespaces.
  let server: Server | undefined
  if (base !== undefined && Buffer.byteLength(socketFile) <= MAX_SOCKET_PATH) {
    server = createServer((socket) => socket.destroy())
    server.on('error', () => { server = undefined })
    server.listen(socketFile)
    server.unref()
  }
  const dir = {
    logDir,
    mark,
    pidns,
    save(shells: readonly string[]): void {
      if (base === undefined) return
      const record: HostRecord = { pid: process.pid, start, pidns, mark, shells: [...shells] }
      try {
        writeFileSync(`${recordFile}.tmp`, JSON.stringify(record), { mode: 0o600 })
        renameSync(`${recordFile}.tmp`, recordFile)
      } catch {
        // A record that cannot be written (a full disk) only loses crash cleanup, never a shell; the last whole one stays.
        rmSync(`${recordFile}.tmp`, { force: true })
      }
    },
    remove(): void {
      server?.close()
      server = undefined
      rmSync(logDir, { recursive: true, force: true })
      rmSync(recordFile, { force: true })
      rmSync(socketFile, { force: true })
    },
  }
  // The record exists before the first shell does: a host killed right after a launch is found.
  dir.save([])
  return dir
}

function readRecord(file: string): HostRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as HostRecord
    return typeof record.mark === 'string' && record.mark.startsWith(`${HOST_MARK}=`) && Array.isArray(record.shells)
      && typeof record.pidns === 'string' ? record : undefined
  } catch {
    return undefined
  }
}

/** Marked processes of reaped hosts owed a SIGKILL: sent by the timer, or at this host's exit if that comes first. */
const owedKill = new Set<() => void>()
let exitHooked = false

function killLater(kill: () => void): void {
  owedKill.add(kill)
  if (!exitHooked) {
    exitHooked = true
    process.once('exit', () => { for (const owed of owedKill) owed() })
  }
  setTimeout(() => {
    if (owedKill.delete(kill)) kill()
  }, LEFTOVER_GRACE_MS).unref()
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
function candidates(own: HostDir, base: string): Array<Candidate & { judged: boolean, dead: boolean }> {
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
    if (record === undefined || record.mark === own.mark) continue
    // Within one PID namespace (an unreadable one proves nothing), a pid whose process has another start time
    // (or none) is not the host any more.
    const sameNamespace = record.pidns !== '' && record.pidns === own.pidns
    found.push({ file, record, judged: sameNamespace, dead: sameNamespace && startTimeOf(record.pid) !== record.start })
  }
  return found
}

/**
 * Claim a dead host's record by renaming it (one host wins; the others find it gone), then stop the processes
 * carrying its mark (its record may lag the last launch) and remove its directory. Returns how many shells had one.
 */
function reap({ file }: Candidate, own: HostDir): number {
  const claimed = `${file.slice(0, -'.json'.length)}.claimed-${basename(own.logDir)}`
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
    const pids = scanShells(targets)[0]?.marked ?? []
    stopped = new Set(pids.map((pid) => envValue(pid, SHELL_MARK) ?? String(pid))).size
    for (const pid of pids) hostSyscalls.signal(pid, 'SIGTERM')
    if (pids.length > 0) killLater(() => { for (const pid of scanShells(targets)[0]?.marked ?? []) hostSyscalls.signal(pid, 'SIGKILL') })
  }
  rmSync(dir, { recursive: true, force: true })
  rmSync(`${dir}.sock`, { force: true })
  rmSync(claimed, { force: true })
  return stopped
}

/** Stop the shells of hosts proven dead by pid and start time (synchronous: at boot, before any shell starts). */
export function reapLeftovers(own: HostDir): number {
  const base = privateBase()
  if (base === undefined) return 0
  let stopped = 0
  for (const candidate of candidates(own, base)) if (candidate.dead) stopped += reap(candidate, own)
  return stopped
}

/**
 * Hosts that pid and start cannot judge (another PID namespace, or none recorded): dead only when their socket
 * refuses a connect. A record without a socket is never acted on.
 */
export async function reapBySocket(own: HostDir): Promise<number> {
  const base = privateBase()
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
