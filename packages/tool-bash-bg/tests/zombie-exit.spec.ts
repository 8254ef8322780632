// A kept leader's end read from its zombie (ProcessCensus.zombieExit) on real zombies, and the keeper's word that
// comes after it correcting it in place (ProcessGroup), on a scripted process table.
import { spawn } from 'node:child_process'
import { EventEmitter } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import { ProcessCensus } from '../src/local/proc-census.ts'
import { ProcessGroup } from '../src/local/process-group.ts'
import { localSyscalls } from '../src/local/syscalls.ts'
import { KILL_POLICY } from '../src/shells/kill-policy.ts'
import { Table } from './process-table.ts'

const census = new ProcessCensus(localSyscalls())
const parents: number[] = []
afterEach(() => {
  for (const pid of parents.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
})

/**
 * A child of a process that never reaps it: the child ends (`script`) only once its parent became `sleep`, which
 * never waits. The child's pid, once it is a zombie.
 */
async function zombie(script: string): Promise<number> {
  const child = `while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done; ${script}`
  const parent = spawn('bash', ['-c', `sh -c '${child}' & echo $!; exec sleep 60`], { stdio: ['ignore', 'pipe', 'ignore'] })
  if (parent.pid !== undefined) parents.push(parent.pid)
  const pid = await new Promise<number>((resolve) => parent.stdout.once('data', (line: Buffer) => resolve(Number(String(line).trim()))))
  while (census.stat(pid)?.zombie !== true) await new Promise((resolve) => setTimeout(resolve, 5))
  return pid
}

describe('a leader\'s end from its zombie', () => {
  it('reads the exit code or the signal of a real zombie, and nothing of a live process or another start time', async () => {
    const seven = await zombie('exit 7')
    const start = census.startTime(seven) ?? -1
    expect(census.zombieExit(seven, start)).toEqual({ code: 7, signal: null })
    // The same pid with another start time is another process: never read as ours.
    expect(census.zombieExit(seven, start + 1)).toBeUndefined()
    const termed = await zombie('kill -TERM $$')
    expect(census.zombieExit(termed, census.startTime(termed) ?? -1)).toEqual({ code: null, signal: 'SIGTERM' })
    const live = spawn('sleep', ['60'], { stdio: 'ignore' })
    if (live.pid !== undefined) parents.push(live.pid)
    await new Promise((resolve) => live.once('spawn', resolve))
    expect(census.zombieExit(live.pid ?? -1, census.startTime(live.pid ?? -1) ?? -1)).toBeUndefined()
  })

  it('a remote leader\'s end taken from its zombie by a kill\'s wait is corrected in place by its parent\'s word', async () => {
    // Leader 500 (start 1000) is another process's child; its zombie shows wait status 0 (a leader thread that ended
    // before its process), its parent (the keeper) reads code 3.
    class Zombies extends Table {
      status = new Map<number, number>()
      override stat(pid: number): string | undefined {
        const text = super.stat(pid)
        const status = this.status.get(pid)
        if (text === undefined || status === undefined) return text
        // Fields after the comm up to exit_code (49): a zombie, one thread (17), wchan 1 (32), the status (49).
        const fields = text.slice(text.lastIndexOf(')') + 2).trim().split(' ')
        while (fields.length < 50) fields.push('0')
        Object.assign(fields, { 0: 'Z', 17: '1', 32: '1', 49: String(status) })
        return `${pid} (odd) name) ${fields.join(' ')}\n`
      }
    }
    const table = new Zombies().add(500, { pgrp: 500, session: 500, start: 1000 })
    const leader = Object.assign(new EventEmitter(), { pid: 500, start: 1000 })
    const group = new ProcessGroup(leader, [], new ProcessCensus(table), KILL_POLICY)
    // The signal lands; the leader is then a zombie its parent has not reaped: the kill's wait reads it.
    table.fatal.clear()
    const killed = group.terminate({ signal: 'SIGTERM', force: false, timeoutMs: 5000 })
    table.status.set(500, 0)
    const exit = await group.exited
    expect(exit).toMatchObject({ code: 0, signal: null })
    expect(await killed).toMatchObject({ signal_sent: 'SIGTERM', survivors: [], exit_code: 0 })
    // The parent's word: the truth, in the same exit object the shell reads when it settles.
    leader.emit('exit', 3, null)
    expect(exit).toMatchObject({ code: 3, signal: null })
    expect(group.leaderExit).toMatchObject({ code: 3 })
    // A later word with neither code nor signal (its parent vanished) changes nothing.
    leader.emit('exit', null, null)
    expect(exit).toMatchObject({ code: 3, signal: null })
  })
})
