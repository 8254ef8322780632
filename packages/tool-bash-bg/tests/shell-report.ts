/**
 * What a spec prints when it gave up waiting on a kept shell: enough, read from the ledger, the files and /proc as they
 * are at that moment, for a hang in CI to say which part stopped (the keeper gone or unaware its host left, the writer
 * stuck, the end written elsewhere).
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs'
import { Ledger, ledgerRoot } from '../src/local/ledger.ts'

/** A file's text, or why there is none. */
function text(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch (error) {
    return `(${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
}

/** One process as /proc shows it: its state letter, where it sleeps in the kernel, its argv, its open descriptors. */
export function processReport(pid: number): string {
  const stat = text(`/proc/${pid}/stat`)
  if (stat.startsWith('(')) return `pid ${pid}: gone ${stat}`
  const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
  const argv = text(`/proc/${pid}/cmdline`).split('\0').join(' ').slice(0, 200)
  let fds: string
  try {
    fds = readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return `${fd}→${readlinkSync(`/proc/${pid}/fd/${fd}`)}`
      } catch {
        return `${fd}→?`
      }
    }).join(' ')
  } catch (error) {
    fds = `(${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  return `pid ${pid}: state ${state}, wchan ${text(`/proc/${pid}/wchan`)}, argv ${argv}, fds ${fds}`
}

/**
 * The unix sockets `pid` holds, each with the process at its other end (`ss -xp`, where installed): a keeper whose host
 * left still connected to it never heard the host leave.
 */
function socketPeers(pid: number): string {
  let table: string[]
  try {
    table = execFileSync('ss', ['-xpn'], { encoding: 'utf8', timeout: 10_000 }).split('\n')
  } catch (error) {
    return `(no ss: ${(error as NodeJS.ErrnoException).code ?? String(error)})`
  }
  const mine = table.filter((line) => line.includes(`pid=${pid},`))
  const peers = mine.map((line) => {
    // Netid, State, Recv-Q, Send-Q, local address and inode, peer address and inode, the users.
    const [, , , , , inode, , peer] = line.trim().split(/\s+/)
    const other = table.find((each) => each.trim().split(/\s+/)[5] === peer && peer !== '0' && each !== line)
    return `${inode} ⇄ ${peer}: ${other?.match(/users:\(.*\)/)?.[0] ?? 'no peer'}`
  })
  return peers.length === 0 ? 'none' : peers.join('; ')
}

/** Live pids whose environment carries the shell's mark (DSH_BG_SHELL=<id>), zombies included. */
function marked(shellId: string): number[] {
  const mark = `\0DSH_BG_SHELL=${shellId}\0`
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'latin1')}`.includes(mark)) found.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

/** The ledger record, exit file, keeper, the shell's processes and its log, as they are now. */
export function shellReport(session: string, shellId: string): string {
  const root = ledgerRoot()
  const lines = [`shell ${shellId} of session ${session}; now DSH_HOME=${process.env.DSH_HOME}, TMPDIR=${process.env.TMPDIR}, ledger root ${root}`]
  let record
  try {
    record = new Ledger(root).read(session, shellId)
  } catch (error) {
    lines.push(`ledger: unreadable (${String(error)})`)
  }
  lines.push(`ledger record: ${record === undefined ? 'none' : JSON.stringify(record)}`)
  if (record !== undefined) {
    lines.push(`exit file ${record.exitFile}: ${text(record.exitFile)}`)
    let size: string
    try {
      size = String(statSync(record.log).size)
    } catch (error) {
      size = `(${(error as NodeJS.ErrnoException).code ?? String(error)})`
    }
    lines.push(`log ${record.log}: ${size} bytes`)
    if (record.keeper === undefined) lines.push('keeper: none recorded')
    else lines.push(`keeper: ${processReport(record.keeper.pid)}`, `keeper's unix sockets: ${socketPeers(record.keeper.pid)} (this process: ${process.pid})`)
  }
  const members = marked(shellId)
  lines.push(`the shell's processes: ${members.length === 0 ? 'none' : ''}`, ...members.map((pid) => `  ${processReport(pid)}`))
  return lines.join('\n')
}
