// Taking a shell back from the keeper of a host that is gone: `adopt <shellId>` over the keeper's socket (the ledger
// record's `keeper.socket`). While the connection lives the keeper runs no TTL for that shell; closing it (or this host
// ending) starts the TTL again, counted from then. The keeper says `ended <shellId>` when the shell's processes are gone.
import { connect, type Socket } from 'node:net'

/** A shell held back from its TTL: its leader's pid and start time as its keeper knows them. */
export interface AdoptedShell {
  pid: number
  start: number
  /** Resolves once the keeper says the shell ended (or the keeper went away). */
  ended: Promise<void>
  /** Give it back to its TTL (the connection closes). */
  release(): void
}

/**
 * Ask the keeper listening on `socket` to hold `shellId` back from its TTL; undefined when that keeper does not know it
 * (ended, or another keeper's), or no keeper answers within `timeoutMs`.
 */
export function adoptShell(socket: string, shellId: string, timeoutMs = 5000): Promise<AdoptedShell | undefined> {
  return new Promise((resolve) => {
    let connection: Socket
    try {
      connection = connect(socket)
    } catch {
      resolve(undefined)
      return
    }
    let answered = false
    let pending = ''
    const ending: { done?: () => void } = {}
    const ended = new Promise<void>((done) => { ending.done = done })
    const markEnded = () => ending.done?.()
    const fail = () => {
      markEnded()
      if (answered) return
      answered = true
      connection.destroy()
      resolve(undefined)
    }
    const timer = setTimeout(fail, timeoutMs)
    connection.setEncoding('utf8')
    connection.on('error', fail)
    connection.on('close', fail)
    connection.on('data', (text: string) => {
      pending += text
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end)
        pending = pending.slice(end + 1)
        if (line === `ended ${shellId}`) markEnded()
        if (answered) continue
        answered = true
        clearTimeout(timer)
        const ok = /^ok (\d+) (\d+)$/.exec(line)
        if (ok === null) {
          connection.destroy()
          resolve(undefined)
          continue
        }
        // Held for as long as this host wants: the connection alone must not keep it alive.
        connection.unref()
        resolve({ pid: Number(ok[1]), start: Number(ok[2]), ended, release: () => connection.destroy() })
      }
    })
    connection.write(`adopt ${shellId}\n`)
  })
}
