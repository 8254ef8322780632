// The host directory: this host's private 0700 log directory (every shell's log, in any world), beside it the crash
// record naming the host and its running shells, and the unix socket that answers while the host lives.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { HOST_MARK } from './proc-census.ts'

/** sockaddr_un's path limit, its NUL included: a longer path gets no socket (liveness then rests on pid and start). */
const MAX_SOCKET_PATH = 107

/** A host's keeper (keeper.ts): while it lives, it guards the host's shells (their TTL), so no other host reaps them. */
export type KeeperIdentity = { pid: number, start: number, socket?: string }

/** `pidns` names the PID namespace `pid` belongs to: a pid from another namespace says nothing about this one's processes. */
export interface HostRecord {
  pid: number
  start: number
  pidns: string
  mark: string
  shells: string[]
  keeper?: KeeperIdentity
  /** The shells its keeper keeps for their session after a crash (owned local shells): no other host reaps them. */
  kept?: string[]
}

/** The log cannot be created: nothing starts. */
export function noLog(toolName: string, dir: string, reason: string): HarnessError {
  return new HarnessError(
    `${toolName}: cannot create its log in ${dir} (${reason}) — nothing was started; make ${dir} (or TMPDIR) a directory only this user can write, or restart the host`,
    'LOG_UNAVAILABLE',
  )
}

/** This process's PID namespace (`pid:[4026531836]`), or '' where it cannot be read. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    return ''
  }
}

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
  // Someone else's directory, a symlink, or one others can write: never trust its records.
  return privateDirProblem(base) === undefined ? realpathSync(base) : undefined
}

export class HostDir {
  readonly logDir: string
  /** The host's name: its log directory's, carried as `DSH_BG_HOST=<name>` by every process of its shells. */
  readonly name: string
  readonly pidns = pidNamespace()
  /** The per-user directory of every host's record (undefined when it is not ours alone: no records kept). */
  readonly base: string | undefined
  private server: Server | undefined
  /** Set by remove(): a save still due (the registry's delayed one) must not re-create the record of a host that ended. */
  private removed = false
  private shells: readonly string[] = []
  private kept: readonly string[] = []
  private keeper: KeeperIdentity | undefined

  /** `start`: this process's start time (the record's proof of life within one PID namespace). */
  constructor(private readonly toolName: string, private readonly start: number) {
    this.base = privateBase()
    const parent = this.base ?? tmpdir()
    try {
      // mkdtemp creates it 0700, outside any workspace.
      this.logDir = realpathSync(mkdtempSync(this.base === undefined ? join(parent, 'dsh-bash-bg-') : join(this.base, 'host-')))
    } catch (error) {
      throw noLog(toolName, parent, (error as NodeJS.ErrnoException).code ?? String(error))
    }
    this.name = basename(this.logDir)
    const socketFile = `${this.logDir}.sock`
    // Alive while this process is: a connect refused proves the host dead, across PID and network namespaces.
    if (this.base !== undefined && Buffer.byteLength(socketFile) <= MAX_SOCKET_PATH) {
      const server = createServer((socket) => socket.destroy())
      server.on('error', () => { this.server = undefined })
      server.listen(socketFile)
      server.unref()
      this.server = server
    }
    // The record exists before the first shell does: a host killed right after a launch is found.
    this.save([])
  }

  /** Why no log can be made now (re-created, 0700 and ours, when something removed it). */
  logDirProblem(): HarnessError | undefined {
    const problem = privateDirProblem(this.logDir)
    return problem === undefined ? undefined : noLog(this.toolName, this.logDir, problem)
  }

  /** Where this host's keeper listens for hosts taking its shells back (undefined: no private base, or too long a path). */
  keeperSocket(): string | undefined {
    const file = `${this.logDir}.keeper`
    return this.base !== undefined && Buffer.byteLength(file) <= MAX_SOCKET_PATH ? file : undefined
  }

  /** The keeper now running for this host: written into the record at once, so a crash right after finds it. */
  keeperIs(keeper: KeeperIdentity | undefined): void {
    if (keeper?.pid === this.keeper?.pid) return
    this.keeper = keeper
    this.save(this.shells, this.kept)
  }

  /** The crash record: which shells run now, and which of them the keeper keeps for their session after a crash. */
  save(shells: readonly string[], kept: readonly string[] = []): void {
    this.shells = [...shells]
    this.kept = [...kept]
    if (this.base === undefined || this.removed) return
    const record: HostRecord = {
      pid: process.pid, start: this.start, pidns: this.pidns, mark: `${HOST_MARK}=${this.name}`, shells: [...shells],
      ...this.keeper === undefined ? {} : { keeper: this.keeper, kept: [...kept] },
    }
    const file = `${this.logDir}.json`
    try {
      writeFileSync(`${file}.tmp`, JSON.stringify(record), { mode: 0o600 })
      renameSync(`${file}.tmp`, file)
    } catch {
      // A record that cannot be written (a full disk) only loses crash cleanup, never a shell; the last whole one stays.
      rmSync(`${file}.tmp`, { force: true })
    }
  }

  /** The host ends: its directory goes, but for `keep` (the files of shells kept past the host's exit, by name). */
  remove(keep: ReadonlySet<string> = new Set()): void {
    this.removed = true
    this.server?.close()
    this.server = undefined
    // The keeper may be finishing a file in it meanwhile: retried, and never a throw from an exit hook.
    const gone = { recursive: true, force: true, maxRetries: 3, retryDelay: 10 }
    try {
      if (keep.size === 0) rmSync(this.logDir, gone)
      else for (const name of readdirSync(this.logDir)) if (!keep.has(name)) rmSync(join(this.logDir, name), gone)
    } catch {}
    rmSync(`${this.logDir}.json`, { force: true })
    rmSync(`${this.logDir}.sock`, { force: true })
  }
}
