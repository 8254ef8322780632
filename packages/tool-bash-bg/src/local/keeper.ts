// The keeper: a small process per host (its own session, so no terminal signal reaches it) that spawns the host's
// background shells and is their parent, so their output never passes through the host and their exit status is
// recorded even when no host runs. argv: [socket path | '']. It lives while it has a host or a shell; once the host is
// gone (a clean exit or a crash: the IPC channel closes), each shell lives at most its TTL unless a host takes it back
// over the socket (`adopt <shellId>`, answered `ok <pid> <start>` or `unknown`; `ended <shellId>` follows when it ends).
import { rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import type { HostMessage, KeeperMessage } from './keeper-protocol.ts'
import { KeptShell } from './kept-shell.ts'
import { ProcessCensus } from './proc-census.ts'
import { localSyscalls } from './syscalls.ts'

class Keeper {
  private readonly shells = new Map<string, KeptShell>()
  private readonly sys = localSyscalls()
  private readonly census = new ProcessCensus(this.sys)
  private hostGone = false
  private server: Server | undefined

  static run(socket: string): Keeper {
    return new Keeper(socket)
  }

  private constructor(private readonly socket: string) {
    process.on('message', (message: HostMessage) => this.onMessage(message))
    process.on('disconnect', () => this.onHostGone())
    if (socket !== '') this.listen()
  }

  private send(message: KeeperMessage): void {
    if (this.hostGone || process.send === undefined) return
    // With a callback, a send into a channel the host has just closed (before 'disconnect' is heard) fails there;
    // without one, Node emits it as an 'error' on process, unhandled: the keeper died, and its shells with their pipes.
    try {
      process.send(message, undefined, {}, () => {})
    } catch {}
  }

  private onMessage(message: HostMessage): void {
    if (message.t === 'leave') {
      this.onHostLeaving()
      return
    }
    if (message.t !== 'spawn') return
    const shell = KeptShell.start(message, this.census, this.sys, (each) => this.send(each), () => this.hostGone)
    if (shell === undefined) return
    this.shells.set(shell.id, shell)
    void shell.ended.then(() => {
      this.shells.delete(shell.id)
      for (const holder of shell.holders) (holder as Socket).write(`ended ${shell.id}\n`)
      this.exitWhenIdle()
    })
  }

  /**
   * The host said it leaves: it is gone from now, and this end of the channel closes, as the host's end may stay open
   * (keeper-protocol.ts, HostLeaves): the host then reads the close and lets its end go too.
   */
  private onHostLeaving(): void {
    this.onHostGone()
    // Nothing follows 'leave' on the channel, so no message of the host's is half read here and this close is not held.
    if (process.connected) process.disconnect()
  }

  private onHostGone(): void {
    this.hostGone = true
    for (const shell of this.shells.values()) shell.armTtl()
    this.exitWhenIdle()
  }

  private listen(): void {
    rmSync(this.socket, { force: true })
    const server = createServer((connection) => this.serve(connection))
    server.on('error', () => { this.server = undefined })
    server.listen(this.socket)
    this.server = server
  }

  /** One host taking shells back: each adopted shell's TTL waits while this connection lives, and starts again when it closes. */
  private serve(connection: Socket): void {
    let pending = ''
    const held = new Set<KeptShell>()
    connection.setEncoding('utf8')
    connection.on('data', (text: string) => {
      pending += text
      // A line is a shell id and a word: anything longer is not ours to parse.
      if (pending.length > 4096) connection.destroy()
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const [verb, id = ''] = pending.slice(0, end).split(' ')
        pending = pending.slice(end + 1)
        const shell = verb === 'adopt' ? this.shells.get(id) : undefined
        if (shell === undefined) {
          connection.write('unknown\n')
          continue
        }
        shell.holders.add(connection)
        shell.disarmTtl()
        held.add(shell)
        connection.write(`ok ${shell.pid} ${shell.start}\n`)
      }
    })
    connection.on('error', () => {})
    connection.on('close', () => {
      for (const shell of held) {
        shell.holders.delete(connection)
        if (this.hostGone) shell.armTtl()
      }
    })
  }

  private exitWhenIdle(): void {
    if (!this.hostGone || this.shells.size > 0) return
    this.server?.close()
    if (this.socket !== '') rmSync(this.socket, { force: true })
    process.exit(0)
  }
}

if (process.send === undefined) throw new Error('keeper.ts runs as a child with an IPC channel')
Keeper.run(process.argv[2] ?? '')
