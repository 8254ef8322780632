import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { peek, alive, bootKs, marker, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

function errorOf(result: Awaited<ReturnType<typeof execTool>>): { code: string | undefined, text: string } {
  expect(result.isError).toBe(true)
  return { code: result.isError ? result.error.info?.code : undefined, text: textOf(result) }
}

describe('bad input', () => {
  it('empty or blank shell_id', async () => {
    host = await bootKs()
    for (const shell_id of ['', '   ']) {
      expect(errorOf(await execTool(host.ctx, 'kill_shell', { shell_id }))).toEqual({
        code: 'INVALID_ARGS',
        text: `Error: invalid shell_id: expected a shell id like bg-a1b2c3 (or its job id), got ${JSON.stringify(shell_id)} — use /tasks to list shells`,
      })
    }
  })

  it('a huge or odd shell_id is echoed quoted and cut at 120 characters, never whole', async () => {
    host = await bootKs()
    const huge = 'x'.repeat(100_000)
    expect(errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: huge })).text)
      .toBe(`Error: Shell not found: "${'x'.repeat(120)}…" (100000 characters)\nKnown shells: none.\nUse /tasks to see available background shells.`)
    const blank = ' '.repeat(100_000)
    expect(errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: blank })).text)
      .toBe(`Error: invalid shell_id: expected a shell id like bg-a1b2c3 (or its job id), got "${' '.repeat(120)}…" (100000 characters) — use /tasks to list shells`)
    expect(errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-abc 12"' })).text)
      .toBe('Error: Shell not found: "bg-abc 12\\""\nKnown shells: none.\nUse /tasks to see available background shells.')
  })

  it('an unknown signal name is refused by the schema, naming the allowed ones', async () => {
    host = await bootKs()
    const { code, text } = errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-aaaaaa', signal: 'SIGHUP' }))
    expect(code).toBe('INVALID_ARGS')
    expect(text).toContain('signal')
    expect(text).toContain('SIGTERM')
  })

  it('timeout must be a whole number of ms in 1..maxTimeoutMs', async () => {
    host = await bootKs({ killShell: { maxTimeoutMs: 20_000, timeoutMs: 3000 } })
    for (const timeout of [0, -5, 20_001]) {
      expect(errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-aaaaaa', timeout }))).toEqual({
        code: 'INVALID_ARGS',
        text: `Error: invalid timeout: expected 1..20000 ms, got ${timeout} — omit it for the default 3000 ms`,
      })
    }
    const fraction = errorOf(await execTool(host.ctx, 'kill_shell', { shell_id: 'bg-aaaaaa', timeout: 1.5 }))
    expect(fraction.code).toBe('INVALID_ARGS')
    expect(fraction.text).toContain('timeout')
  })

  it('force false with SIGKILL is fine: SIGKILL needs no escalation', async () => {
    host = await bootKs()
    const mark = marker('killnoforce')
    const bg = await startBg(host, `trap '' TERM; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, signal: 'SIGKILL', force: false })
    expect(result.value).toMatchObject({ success: true, outcome: 'terminated', signal_sent: 'SIGKILL', force_killed: false, survivors: [] })
    expect(pidsWithArgv0(mark)).toEqual([])
  })
})

describe('abort', () => {
  it('before dispatch: nothing is signalled', async () => {
    host = await bootKs()
    const bg = await startBg(host, 'sleep 60')
    const controller = new AbortController()
    controller.abort()
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id }, { signal: controller.signal })
    expect(errorOf(result).code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(alive(bg.pid)).toBe(true)
    expect(peek(host, bg.shell_id)?.status).toBe('running')
  })

  it('during the wait: the call ends as aborted, and the kill it started still finishes', async () => {
    host = await bootKs()
    const mark = marker('abort')
    const bg = await startBg(host, `trap '' TERM; exec -a ${mark} sleep 60`)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const controller = new AbortController()
    const call = execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id, timeout: 1500 }, { signal: controller.signal })
    // Abort once the kill is under way (the registry holds its termination), not before dispatch.
    type Shells = Map<string, { termination?: unknown }>
    const shells = (host.shells as unknown as { shells: Shells }).shells
    await until(() => shells.get(bg.shell_id)?.termination !== undefined, 'the kill under way')
    controller.abort()
    const result = await call
    const { code, text } = errorOf(result)
    expect(code).toBe('ABORTED')
    expect(text).toContain('the kill itself goes on')
    // Aborting stopped the waiting, not the kill: the group still gets its SIGKILL.
    expect(peek(host, bg.shell_id)?.status).toBe('running')
    const record = await host.shells.settled(bg.shell_id)
    expect(record).toMatchObject({ status: 'killed', signal: 'SIGKILL' })
    expect(pidsWithArgv0(mark)).toEqual([])
  })
})
