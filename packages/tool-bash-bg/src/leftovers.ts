// Crash leftovers: each host keeps a private record and marks its shells' processes with `DSH_BG_HOST`; the next
// host stops the marked processes of a host that died without cleanup. A live host's record is never acted on.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { envValue, HOST_MARK, scanShells, SHELL_MARK, startTimeOf } from './proc-census.ts'
import { hostSyscalls } from './syscalls.ts'

/** Between SIGTERM and SIGKILL. */
const LEFTOVER_GRACE_MS = 1000

type HostRecord = { pid: number, start: number, mark: string, shells: string[] }

/** This host's private 0700 log directory, its `DSH_BG_HOST=…` mark, and its crash record. */
export type HostDir = ReturnType<typeof openHostDir>

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
  // mkdtemp creates it 0700, outside any workspace.
  const logDir = realpathSync(mkdtempSync(base === undefined ? join(tmpdir(), 'dsh-bash-bg-') : join(base, 'host-')))
  const mark = `${HOST_MARK}=${basename(logDir)}`
  const recordFile = `${logDir}.json`
  const start = startTimeOf(process.pid) ?? 0
  const dir = {
    logDir,
    mark,
    save(shells: readonly string[]): void {
      if (base === undefined) return
      const record: HostRecord = { pid: process.pid, start, mark, shells: [...shells] }
      try {
        writeFileSync(`${recordFile}.tmp`, JSON.stringify(record), { mode: 0o600 })
        renameSync(`${recordFile}.tmp`, recordFile)
      } catch {
        // A record that cannot be written only loses crash cleanup, never a shell.
      }
    },
    remove(): void {
      rmSync(logDir, { recursive: true, force: true })
      rmSync(recordFile, { force: true })
    },
  }
  // The record exists before the first shell does: a host killed right after a launch is found.
  dir.save([])
  return dir
}

function readRecord(file: string): HostRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as HostRecord
    return typeof record.mark === 'string' && record.mark.startsWith(`${HOST_MARK}=`) && Array.isArray(record.shells) ? record : undefined
  } catch {
    return undefined
  }
}

/** Stop every process carrying a dead host's mark (its record may lag the last launch); returns how many shells had one. */
export function reapLeftovers(own: HostDir): number {
  const base = privateBase()
  if (base === undefined) return 0
  let entries: string[]
  try {
    entries = readdirSync(base)
  } catch {
    return 0
  }
  let stopped = 0
  for (const entry of entries) {
    const file = join(base, entry)
    const record = entry.endsWith('.json') ? readRecord(file) : undefined
    // The host still runs: the same pid with the same start time.
    if (record === undefined || record.mark === own.mark || startTimeOf(record.pid) === record.start) continue
    const targets = [{ pgid: 0, leaderStart: record.start, group: false, marks: [record.mark] }]
    const pids = scanShells(targets)[0]?.marked ?? []
    stopped += new Set(pids.map((pid) => envValue(pid, SHELL_MARK) ?? String(pid))).size
    for (const pid of pids) hostSyscalls.signal(pid, 'SIGTERM')
    if (pids.length > 0) {
      setTimeout(() => {
        for (const pid of scanShells(targets)[0]?.marked ?? []) hostSyscalls.signal(pid, 'SIGKILL')
      }, LEFTOVER_GRACE_MS).unref()
    }
    rmSync(file.slice(0, -'.json'.length), { recursive: true, force: true })
    rmSync(file, { force: true })
  }
  return stopped
}
