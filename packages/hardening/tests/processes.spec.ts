/**
 * Processes: background shells started and killed in cycles, the plugin disposed and the host
 * SIGTERMed with shells running. The world is checked in /proc: every process a shell started
 * carries this file's env marker, and none may be left; the host's fd table must not grow; the
 * log directory holds only logs of shells the registry still knows.
 */
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { fdCount, markChildren, markedPids, until } from '../src/procs.ts'
import { SHELL_KINDS } from '../src/shells.ts'

const mark = markChildren('procs')
const KINDS = Object.entries(SHELL_KINDS)
const BATCH = 10

async function start(host: Host, command: string): Promise<{ shell_id: string, output_file: string }> {
  const result = await execTool(host.ctx, 'bash_bg', { command, run_in_background: true })
  if (result.isError) throw new Error(textOf(result))
  return result.value as { shell_id: string, output_file: string }
}

const logFiles = (dir: string): string[] => readdirSync(dir).sort()
const dirBytes = (dir: string): number => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0)

describe('cycles of start and kill', () => {
  let host: Host
  let shells: ShellRegistry
  beforeAll(async () => {
    host = await bootHost()
    // Finished shells are dropped (with their logs) as soon as the next start or listing looks.
    await host.ctx.plugin(BashBg, { maxEntries: BATCH, keepFinishedMs: 1 })
    await host.ctx.plugin(KillShell, { timeoutMs: 100 })
    shells = host.ctx.get('backgroundShells') as ShellRegistry
  })
  afterAll(async () => { await host.dispose() })

  it(`starts and kills ${runs(500, 60)} shells (TERM-honouring, TERM-ignoring, forking, double-forking, setsid children and daemons): nothing left, no fd leaked, logs bounded`, async () => {
    const total = runs(500, 60)
    const tally = { started: 0, killed: 0, escalated: 0, alreadyExited: 0 }
    const cycle = async (n: number) => {
      const batch = await Promise.all(Array.from({ length: n }, (_, i) => start(host, KINDS[(tally.started + i) % KINDS.length]![1])))
      tally.started += n
      const results = await withinMs(60_000, 'a batch of kills', Promise.all(batch.map((shell) => execTool(host.ctx, 'kill_shell', { shell_id: shell.shell_id }))))
      for (const result of results) {
        expect(result.isError, textOf(result)).toBe(false)
        const value = result.value as { success: boolean, outcome: string, force_killed: boolean }
        expect(value.success, textOf(result)).toBe(true)
        if (value.outcome === 'already-exited') tally.alreadyExited++
        else tally.killed++
        if (value.force_killed) tally.escalated++
      }
      return batch
    }
    // One batch first, so lazily opened descriptors (the /proc scans, the job registry) exist before we count.
    await cycle(BATCH)
    await until(() => markedPids(mark).length === 0, 'the warm-up batch to die')
    const fdsBefore = fdCount()
    while (tally.started < total) {
      await cycle(Math.min(BATCH, total - tally.started))
      // Every process of every shell is gone, verified in /proc (not by the registry).
      expect(markedPids(mark)).toEqual([])
      // The finished shells are dropped by the next look: no log outlives its record.
      const known = new Set(shells.list(undefined).map((record) => record.output_file.split('/').pop()))
      expect(logFiles(shells.logDir).filter((name) => !known.has(name))).toEqual([])
    }
    expect(tally.started).toBe(total)
    expect(tally.escalated).toBeGreaterThan(0)
    // Descriptors: pipes and log files of every shell are closed (the count is back where it was).
    await until(() => fdCount() <= fdsBefore, `fds back to ${fdsBefore} (now ${fdCount()})`, 5000)
    // Finished shells are pruned with their logs (by age; 1 ms here): the directory empties.
    const bytesBeforePrune = dirBytes(shells.logDir)
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(shells.list(undefined)).toEqual([])
    expect(logFiles(shells.logDir)).toEqual([])
    console.log(`process cycles: ${tally.started} shells started and killed (${tally.killed} killed, ${tally.escalated} needed SIGKILL, ${tally.alreadyExited} already exited); 0 processes left; fds ${fdsBefore} -> ${fdCount()}; log dir ${bytesBeforePrune} bytes before prune, 0 files after`)
  }, LONG_TEST_MS)
})

describe('shells running when the plugin or the host goes', () => {
  let host: Host | undefined
  afterEach(async () => { await host?.dispose(); host = undefined })

  it('disposing the plugin with 20 shells running kills every group and removes the logs', async () => {
    host = await bootHost()
    const fiber = await host.ctx.plugin(BashBg, { maxEntries: 20 })
    const shells = host.ctx.get('backgroundShells') as ShellRegistry
    for (let i = 0; i < 20; i++) await start(host, KINDS[i % KINDS.length]![1])
    await until(() => markedPids(mark).length >= 20 + 8, 'the shells and their children')
    expect(shells.running()).toHaveLength(20)
    const logDir = shells.logDir
    await withinMs(30_000, 'dispose', fiber.dispose())
    expect(markedPids(mark)).toEqual([])
    expect(() => statSync(logDir)).toThrow()
  })

  it('SIGTERM to a real host process with 20 shells running: every group dies with it', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../fixtures/host.ts'), '20'], {
      cwd: join(import.meta.dirname, '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      let out = ''
      await withinMs(60_000, 'the child host to start 20 shells', new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => { out += String(data); if (out.includes('ready ')) resolve() })
        child.once('exit', (code) => reject(new Error(`child host exited early (${code}): ${out}`)))
      }))
      const logDir = out.trim().split(' ')[2] ?? ''
      // The child host itself (and its esbuild service) carry the marker too; the shells are the rest.
      await until(() => markedPids(mark).filter((pid) => pid !== child.pid).length >= 20 + 8, 'the shells and their children')
      const exited = new Promise<{ code: number | null, signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
      child.kill('SIGTERM')
      expect(await withinMs(30_000, 'the child host to exit', exited)).toEqual({ code: null, signal: 'SIGTERM' })
      // The exit handler SIGKILLed every group before the host ended (a survivor would live 30 s);
      // the short wait is for the host's own esbuild helper, which exits when its parent is gone.
      await until(() => markedPids(mark).length === 0, 'no marked process left', 5000)
      expect(() => statSync(logDir)).toThrow()
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    }
  })
})
