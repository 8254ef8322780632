// The ledger on a real directory: whole records only (a writer SIGKILLed at any instant leaves the old or the new
// one), never another session's or a forged file, a private directory, and the bounds prune keeps.
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Ledger, LEDGER_LIMITS, ledgerRoot, sessionKey, type LedgerRecord } from '../src/local/ledger.ts'

const base = mkdtempSync(join(tmpdir(), 'ledger-spec-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))
let made = 0
const fresh = () => new Ledger(join(base, `root-${++made}`))

function record(shellId: string, patch: Partial<LedgerRecord> = {}): LedgerRecord {
  return {
    v: 1, shellId, session: 'session-a', command: 'sleep 1', cwd: '/tmp', pid: 4242, pidStart: 1000, pidns: 'pid:[1]',
    log: `/tmp/${shellId}.log`, streams: `/tmp/${shellId}.streams`, exitFile: `/tmp/${shellId}.exit.json`,
    startedAt: 1_000, state: 'running', keep: false, ttlMs: 1_800_000, ...patch,
  }
}

describe('the ledger', () => {
  it('lives under $DSH_HOME (else ~/.dsh), one directory per session named by a hash of its id', () => {
    expect(ledgerRoot({ DSH_HOME: '/x/home' })).toBe('/x/home/bash-bg/ledger')
    expect(ledgerRoot({})).toMatch(/\/\.dsh\/bash-bg\/ledger$/)
    expect(sessionKey('../../etc')).toMatch(/^[0-9a-f]{16}$/)
    const ledger = fresh()
    expect(ledger.dirOf('s')).toBe(join(ledger.root, sessionKey('s')))
  })

  it('writes, reads, updates, lists in start order and removes; files 0600 in a 0700 directory', () => {
    const ledger = fresh()
    ledger.write(record('bg-bbbbbb', { startedAt: 2_000 }))
    ledger.write(record('bg-aaaaaa', { startedAt: 1_000 }))
    expect(ledger.list('session-a').map((each) => each.shellId)).toEqual(['bg-aaaaaa', 'bg-bbbbbb'])
    expect(ledger.list('session-b')).toEqual([])
    const next = ledger.update('session-a', 'bg-aaaaaa', { state: 'ended', exitCode: 7, endedAt: 3_000 })
    expect(next).toMatchObject({ shellId: 'bg-aaaaaa', state: 'ended', exitCode: 7, endedAt: 3_000, command: 'sleep 1' })
    expect(ledger.read('session-a', 'bg-aaaaaa')).toEqual(next)
    expect(ledger.update('session-a', 'bg-zzzzzz', { state: 'ended' })).toBeUndefined()
    const dir = ledger.dirOf('session-a')
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, 'bg-aaaaaa.json')).mode & 0o777).toBe(0o600)
    ledger.remove('session-a', 'bg-aaaaaa')
    expect(ledger.list('session-a').map((each) => each.shellId)).toEqual(['bg-bbbbbb'])
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  it('never takes a file that is not this session\'s whole record of that shell', () => {
    const ledger = fresh()
    ledger.write(record('bg-aaaaaa'))
    const dir = ledger.dirOf('session-a')
    // Another session's record copied in, a record under another shell's name, garbage, a half-written tmp file.
    writeFileSync(join(dir, 'bg-cccccc.json'), JSON.stringify(record('bg-cccccc', { session: 'session-b' })))
    writeFileSync(join(dir, 'bg-dddddd.json'), JSON.stringify(record('bg-eeeeee')))
    writeFileSync(join(dir, 'bg-ffffff.json'), '{"v":1,"shellId":"bg-ffffff","sess')
    writeFileSync(join(dir, 'bg-aaaaaa.json.1234.tmp'), '{"v":1')
    expect(ledger.list('session-a').map((each) => each.shellId)).toEqual(['bg-aaaaaa'])
    expect(ledger.read('session-a', 'bg-cccccc')).toBeUndefined()
    expect(ledger.read('session-a', '../bg-aaaaaa')).toBeUndefined()
  })

  it('refuses a directory others may write', () => {
    const ledger = fresh()
    ledger.write(record('bg-aaaaaa'))
    chmodSync(ledger.dirOf('session-a'), 0o777)
    expect(() => ledger.write(record('bg-bbbbbb'))).toThrow(/mode 777, open to others/)
    expect(ledger.problem('session-a')).toMatch(/open to others/)
  })

  it('a writer SIGKILLed at any instant leaves a whole record: the old one or the new one', async () => {
    const ledger = fresh()
    ledger.write(record('bg-aaaaaa', { exitCode: 0 }))
    // A real process rewriting the record as fast as it can, killed at a different moment each round.
    const writer = `
      import { Ledger } from ${JSON.stringify(new URL('../src/local/ledger.ts', import.meta.url).href)}
      const ledger = new Ledger(${JSON.stringify(ledger.root)})
      const big = 'x'.repeat(64 * 1024)
      process.stdout.write('go\\n')
      for (let n = 1; ; n++) ledger.update('session-a', 'bg-aaaaaa', { exitCode: n, command: big + n })
    `
    const seen = new Set<number>()
    for (let round = 0; round < 8; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writer], { stdio: ['ignore', 'pipe', 'inherit'] })
      await new Promise((resolve) => child.stdout.once('data', resolve))
      await new Promise((resolve) => setTimeout(resolve, 20 + round * 17))
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
      const [whole] = ledger.list('session-a')
      expect(whole?.shellId).toBe('bg-aaaaaa')
      const n = whole?.exitCode ?? -1
      expect(n).toBeGreaterThanOrEqual(0)
      // Each field from one write: the command carries the same number as the exit code.
      if (n > 0) expect(whole?.command.endsWith(String(n))).toBe(true)
      seen.add(n)
    }
    expect([...seen].some((n) => n > 0)).toBe(true)
  }, 60_000)

  it('prune removes delivered ended shells, ended ones past the age limit, the oldest past the cap, and stale tmp files', () => {
    const ledger = fresh()
    const now = 10 * LEDGER_LIMITS.maxAgeMs
    ledger.write(record('bg-run000', { startedAt: 1 }))
    ledger.write(record('bg-dlv000', { state: 'ended', endedAt: now - 1_000, delivery: { messageId: 'm', state: 'delivered' } }))
    ledger.write(record('bg-dlving', { state: 'ended', endedAt: now - 1_000, delivery: { messageId: 'm', state: 'delivering' } }))
    ledger.write(record('bg-old000', { state: 'interrupted', startedAt: 1 }))
    ledger.write(record('bg-new000', { state: 'ended', endedAt: now - 1_000 }))
    const dir = ledger.dirOf('session-a')
    writeFileSync(join(dir, 'bg-new000.json.dead.tmp'), '{')
    utimesSync(join(dir, 'bg-new000.json.dead.tmp'), 1, 1)
    writeFileSync(join(dir, 'bg-new000.json.live.tmp'), '{')
    expect(ledger.prune(now)).toBe(2)
    expect(ledger.list('session-a').map((each) => each.shellId).sort()).toEqual(['bg-dlving', 'bg-new000', 'bg-run000'])
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual(['bg-new000.json.live.tmp'])
    // Past the cap, the oldest ended records go; a running shell's stays.
    for (let i = 0; i < LEDGER_LIMITS.perSession; i++) {
      ledger.write(record(`bg-e${String(i).padStart(5, '0')}`, { state: 'ended', endedAt: now - 100_000 + i }))
    }
    expect(ledger.prune(now)).toBe(3)
    const left = ledger.list('session-a').map((each) => each.shellId)
    expect(left).toHaveLength(LEDGER_LIMITS.perSession)
    expect(left).toContain('bg-run000')
    expect(left).not.toContain('bg-e00000')
    expect(left).toContain('bg-new000')
  })

  it('prune removes an exit file whose record went (a keeper wrote it after its host removed the record), once stale', () => {
    const ledger = fresh()
    const now = Date.now()
    ledger.write(record('bg-kept00'))
    const dir = ledger.dirOf('session-a')
    for (const id of ['bg-kept00', 'bg-gone00', 'bg-new000']) writeFileSync(join(dir, `${id}.exit.json`), '{}')
    for (const id of ['bg-kept00', 'bg-gone00']) utimesSync(join(dir, `${id}.exit.json`), 1, 1)
    expect(ledger.prune(now)).toBe(0)
    expect(readdirSync(dir).sort()).toEqual(['bg-kept00.exit.json', 'bg-kept00.json', 'bg-new000.exit.json'])
  })

  it('prune skips what is not a session directory', () => {
    const ledger = fresh()
    mkdirSync(join(ledger.root, 'not-a-session'), { recursive: true })
    writeFileSync(join(ledger.root, 'not-a-session', 'bg-aaaaaa.json'), JSON.stringify(record('bg-aaaaaa', { state: 'ended', endedAt: 0 })))
    expect(ledger.prune()).toBe(0)
    expect(new Ledger(join(base, 'missing')).prune()).toBe(0)
  })
})
