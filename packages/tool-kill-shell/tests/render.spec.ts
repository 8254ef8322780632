import { describe, expect, it } from 'vitest'
import type { ShellSnapshot as ShellRecord } from '@gencode-ai/dsh-tool-bash-bg'
import { renderKill, renderNotFound } from '../src/render.ts'
import { cardFor, presentCall, presentResult } from '../src/present.ts'
import type { KillShellValue } from '../src/value.ts'

const base: KillShellValue = {
  success: true,
  shell_id: 'bg-a1b2c3',
  outcome: 'terminated',
  signal_sent: 'SIGTERM',
  force_killed: false,
  exit_code: null,
  elapsed_ms: 42,
  survivors: [],
  timeout_ms: 5000,
  command: 'npm run dev',
}

function record(id: string, status: ShellRecord['status'], started: string): ShellRecord {
  return {
    id, pid: 1000, command: 'x', cwd: '/', owner: 's', started_at: started, status, exit_code: null, signal: null,
    leader_exited_at: null, ended_at: null, output_file: '/dev/null', bytes: 0, capped: false, last_output_at: null, processes: 1,
  }
}

describe('model text', () => {
  it('terminated gracefully', () => {
    expect(renderKill(base)).toBe('Stopped bg-a1b2c3: sent SIGTERM; all processes exited after 42 ms. No SIGKILL needed.')
    expect(renderKill({ ...base, exit_code: 0 })).toBe('Stopped bg-a1b2c3: sent SIGTERM; all processes exited after 42 ms (exit code 0). No SIGKILL needed.')
  })

  it('killed by a first SIGKILL does not claim SIGKILL was avoided', () => {
    expect(renderKill({ ...base, signal_sent: 'SIGKILL', elapsed_ms: 3 })).toBe('Stopped bg-a1b2c3: sent SIGKILL; all processes exited after 3 ms.')
  })

  it('force killed after the timeout', () => {
    expect(renderKill({ ...base, outcome: 'force-killed', force_killed: true, timeout_ms: 3000, elapsed_ms: 3012 }))
      .toBe('Stopped bg-a1b2c3: sent SIGTERM, still running after 3000 ms, then SIGKILL; all processes exited after 3012 ms.')
  })

  it('survivors with force off say so and how to finish the job', () => {
    const value: KillShellValue = { ...base, success: false, outcome: 'survivors', survivors: [1234, 1240], timeout_ms: 200, elapsed_ms: 203 }
    expect(renderKill(value)).toBe('Not stopped bg-a1b2c3: sent SIGTERM (force=false, no SIGKILL sent); 2 processes still alive after 203 ms: 1234, 1240. Retry with signal SIGKILL.')
  })

  it('survivors even after SIGKILL', () => {
    const value: KillShellValue = { ...base, success: false, outcome: 'survivors', force_killed: true, survivors: [7], timeout_ms: 100, elapsed_ms: 1105 }
    expect(renderKill(value)).toBe('Not stopped bg-a1b2c3: sent SIGTERM, still running after 100 ms, then SIGKILL; 1 process still alive after 1105 ms: 7. They may be stuck in the kernel or have left the group.')
  })

  it('caps the pids named in the text, not in the value', () => {
    const survivors = Array.from({ length: 23 }, (_, i) => 100 + i)
    const text = renderKill({ ...base, success: false, outcome: 'survivors', survivors, signal_sent: 'SIGINT' })
    expect(text).toContain('23 processes still alive after 42 ms: 100, 101,')
    expect(text).toContain('119, … (+3 more). Retry with signal SIGKILL.')
  })

  it('already exited uses the note', () => {
    const value: KillShellValue = { ...base, outcome: 'already-exited', signal_sent: 'none', exit_code: 0, elapsed_ms: 0, note: 'Shell already completed' }
    expect(renderKill(value)).toBe('Shell already completed: bg-a1b2c3 (exit code 0). No signal sent.')
    expect(renderKill({ ...value, exit_code: null, note: 'Shell already killed' })).toBe('Shell already killed: bg-a1b2c3. No signal sent.')
  })

  it('not found lists known ids, running first then newest, capped', () => {
    const known = [
      record('bg-old001', 'completed', '2026-01-01T00:00:00.000Z'),
      record('bg-run001', 'running', '2026-01-01T00:01:00.000Z'),
      record('bg-new001', 'killed', '2026-01-01T00:02:00.000Z'),
    ]
    // The liveness words come from the registry (tool-bash-bg); here, a stand-in that shows the status.
    const status = (shell: ShellRecord) => `${shell.status} …`
    expect(renderNotFound('bg-zzzzzz', known, 10, status)).toBe(
      'Shell not found: bg-zzzzzz\nKnown shells: bg-run001 (running …), bg-new001 (killed …), bg-old001 (completed …).\nUse /tasks to see available background shells.')
    expect(renderNotFound('x', known, 2, status)).toBe(
      'Shell not found: x\nKnown shells: bg-run001 (running …), bg-new001 (killed …), … (+1 more).\nUse /tasks to see available background shells.')
    expect(renderNotFound('invalid-id', [], 10, status)).toBe('Shell not found: invalid-id\nKnown shells: none.\nUse /tasks to see available background shells.')
  })
})

describe('UI card (the README\'s layouts)', () => {
  it('Process Terminated', () => {
    expect(cardFor(base)).toEqual({
      title: 'Process Terminated',
      text: [
        '┌─ Process Terminated ──────────────────────────────┐',
        '│ Shell ID: bg-a1b2c3                               │',
        '│ Command: npm run dev                              │',
        '│ Signal: SIGTERM                                   │',
        '│ Status: Terminated gracefully                     │',
        '└───────────────────────────────────────────────────┘',
      ].join('\n'),
    })
  })

  it('Process Force Killed', () => {
    const value: KillShellValue = { ...base, shell_id: 'bg-stuck', outcome: 'force-killed', force_killed: true, timeout_ms: 3000, elapsed_ms: 3010 }
    expect(cardFor(value).text).toBe([
      '┌─ Process Force Killed ────────────────────────────┐',
      '│ Shell ID: bg-stuck                                │',
      '│ Signal: SIGTERM → SIGKILL                         │',
      '│ Status: Force killed after 3s timeout             │',
      '│ Note: Process did not respond to SIGTERM          │',
      '└───────────────────────────────────────────────────┘',
    ].join('\n'))
    expect(cardFor({ ...value, timeout_ms: 2500 }).text).toContain('│ Status: Force killed after 2.5s timeout           │')
  })

  it('Process Still Running and Already Exited', () => {
    expect(cardFor({ ...base, success: false, outcome: 'survivors', survivors: [11, 12], elapsed_ms: 1500 }).text).toBe([
      '┌─ Process Still Running ───────────────────────────┐',
      '│ Shell ID: bg-a1b2c3                               │',
      '│ Command: npm run dev                              │',
      '│ Signal: SIGTERM                                   │',
      '│ Status: 2 processes alive after 1.5s              │',
      '│ Survivors: 11, 12                                 │',
      '└───────────────────────────────────────────────────┘',
    ].join('\n'))
    expect(cardFor({ ...base, outcome: 'already-exited', signal_sent: 'none', note: 'Shell already completed' }).text).toContain('│ Status: Shell already completed                   │')
  })

  it('long commands widen the card to 80 columns, then cut with an ellipsis', () => {
    const lines = cardFor({ ...base, command: 'x'.repeat(200) }).text.split('\n')
    expect(new Set(lines.map((line) => line.length))).toEqual(new Set([80]))
    expect(lines[2]).toBe(`│ Command: ${'x'.repeat(67)}…│`)
  })

  it('presentCall and presentResult are pure projections of args and the result', () => {
    expect(presentCall({ shell_id: 'bg-a1b2c3' })).toEqual({ card: 'generic', title: 'Kill shell bg-a1b2c3', kind: 'execute', rawInput: 'bg-a1b2c3' })
    expect(presentCall({ shell_id: 'bg-a1b2c3', signal: 'SIGKILL' }).title).toBe('Kill shell bg-a1b2c3 (SIGKILL)')
    const meta = JSON.parse(JSON.stringify(base))
    expect(presentResult({ content: [{ type: 'text', text: 'x' }], isError: false, meta })).toEqual({
      card: 'generic', title: 'Process Terminated', content: [{ type: 'text', text: cardFor(base).text }],
    })
    expect(presentResult({ content: [], isError: false, meta: { foreign: 1 } })).toBeUndefined()
    expect(presentResult({ content: [], isError: false })).toBeUndefined()
    const notFound = presentResult({
      content: [{ type: 'text', text: renderNotFound('invalid-id', [], 10, String) }],
      isError: true,
    })
    expect(notFound).toEqual({
      card: 'generic',
      title: 'Shell not found',
      content: [{ type: 'text', text: 'Error: Shell not found: invalid-id\nUse /tasks to see available background shells.' }],
    })
    // The runtime's failure text carries the 'Error: ' envelope; it is not doubled.
    expect(presentResult({ content: [{ type: 'text', text: `Error: ${renderNotFound('invalid-id', [], 10, String)}` }], isError: true })).toEqual(notFound)
    expect(presentResult({ content: [{ type: 'text', text: 'Error: invalid timeout' }], isError: true })).toBeUndefined()
  })
})
