import { describe, expect, it } from 'vitest'
import { render, type ForegroundValue } from '../src/tool/render.ts'
import { ago, renderTasks } from '../src/tool/tasks.ts'
import type { ShellSnapshot as ShellRecord } from '../src/contract.ts'

const fg = (over: Partial<ForegroundValue> = {}): ForegroundValue => ({
  kind: 'foreground',
  exit_code: 0,
  signal: null,
  timed_out: false,
  timeout_ms: 120000,
  stdout: { text: '', cut: 0 },
  stderr: { text: '', cut: 0 },
  leftovers_stopped: 0,
  output_held_open: false,
  ...over,
})

describe('foreground text', () => {
  it('is stdout alone on success', () => {
    expect(render(fg({ stdout: { text: 'hi\n', cut: 0 } }))).toBe('hi\n')
  })
  it('says (no output) when both streams are empty', () => {
    expect(render(fg())).toBe('(no output)')
  })
  it('marks stderr and a non-zero exit', () => {
    expect(render(fg({ exit_code: 3, stdout: { text: 'out', cut: 0 }, stderr: { text: 'err\n', cut: 0 } })))
      .toBe('out\n[stderr]\nerr\n[exit code: 3]')
  })
  it('marks a timeout and the signal that ended the command', () => {
    expect(render(fg({ exit_code: null, signal: 'SIGTERM', timed_out: true, timeout_ms: 500 })))
      .toBe('(no output)\n[timed out after 500ms]\n[killed by signal: SIGTERM]')
  })
  it('marks a cut stream with how much is hidden and how to keep it', () => {
    expect(render(fg({ stdout: { text: 'tail\n', cut: 10 } })))
      .toBe('[stdout cut: the first 10 bytes are not shown; redirect to a file or use run_in_background to keep everything]\ntail\n')
  })
  it('describes a binary stream by its size, on either stream', () => {
    const described = '[stdout: 120000 bytes of binary output, not shown and not kept; redirect it to a file to keep it, then inspect that file (xxd, file)]'
    expect(render(fg({ stdout: { text: '', cut: 120_000, binary: true } }))).toBe(described)
    expect(render(fg({ stdout: { text: 'ok', cut: 0 }, stderr: { text: '', cut: 9, binary: true } })))
      .toBe('ok\n[stderr]\n[stderr: 9 bytes of binary output, not shown and not kept; redirect it to a file to keep it, then inspect that file (xxd, file)]')
  })
  it('escapes control characters of text output, cut or not', () => {
    expect(render(fg({ stdout: { text: '\x1b[1mbold\x1b[0m\r\n', cut: 0 } }))).toBe('\\x1b[1mbold\\x1b[0m\n')
    expect(render(fg({ stdout: { text: 'a\x07', cut: 5 } }))).toContain(']\na\\x07')
  })
  it('reports leftover processes it stopped, singular and plural', () => {
    expect(render(fg({ leftovers_stopped: 1 }))).toBe('(no output)\n[stopped 1 leftover process of this command; use run_in_background for servers]')
    expect(render(fg({ leftovers_stopped: 2 }))).toContain('[stopped 2 leftover processes of this command;')
    // A leftover that outlived SIGKILL (stuck in the kernel) is named, with what to do instead.
    expect(render(fg({ leftovers_stopped: 1, leftovers_running: [4242] }))).toBe(
      '(no output)\n[stopped 1 leftover process of this command; use run_in_background for servers]\n'
      + '[pid 4242 left the command\'s group and keeps running; use run_in_background]',
    )
    expect(render(fg({ leftovers_stopped: 2, leftovers_running: [1, 2] }))).toContain('[pids 1, 2 left the command\'s group and keep running;')
  })
  it('says when it stopped reading output held open from outside the group', () => {
    expect(render(fg({ stdout: { text: 'hi\n', cut: 0 }, output_held_open: true })))
      .toBe("hi\n[stopped reading output: a process that left this command's process group (setsid) still holds it open and was not stopped; use run_in_background for servers]")
  })
})

describe('background text', () => {
  it('escapes control characters of a matched line and of the last lines', () => {
    const base = { kind: 'background', shell_id: 'bg-abc123', pid: 7, output_file: '/l/bg-abc123.log' } as const
    expect(render({ ...base, wait: 'matched', wait_ms: 500, matched_line: '\x1b[32mready\x1b[0m' }))
      .toContain('Matched wait_for: \\x1b[32mready\\x1b[0m\n')
    expect(render({ ...base, wait: 'timeout', wait_ms: 500, last_lines: ['a\x07', 'b'] })).toContain('Last lines:\na\\x07\nb\n')
  })
  it('says how many lines wait_for never tested, when it did not match', () => {
    const base = { kind: 'background', shell_id: 'bg-abc123', pid: 7, output_file: '/l/bg-abc123.log' } as const
    const timeout = render({ ...base, wait: 'timeout', wait_ms: 500, last_lines: ['x'], untested_lines: 3 })
    expect(timeout.split('\n')).toContain('[3 lines came faster than wait_for could test them and were not tested: read the file for them]')
    const exited = render({ ...base, wait: 'exited', wait_ms: 500, last_lines: [], exit_code: 0, signal: null, untested_lines: 1 })
    expect(exited.split('\n').at(-1)).toBe('[1 line came faster than wait_for could test them and was not tested: read the file for them]')
  })
  it('names the shell, pid, job and output file', () => {
    expect(render({ kind: 'background', shell_id: 'bg-abc123', pid: 42, output_file: '/tmp/x/bg-abc123.log', job_id: 'bash_bg-1', stop_with: 'kill_shell' })).toBe([
      'Started background shell bg-abc123 (pid 42, job bash_bg-1).',
      'Output file: /tmp/x/bg-abc123.log',
      'Read the file for output; stop the shell with kill_shell.',
    ].join('\n'))
  })
  it('says a timeout was ignored, without a job', () => {
    expect(render({ kind: 'background', shell_id: 'bg-abc123', pid: 42, output_file: '/f', timeout_ignored: true })).toBe([
      'Started background shell bg-abc123 (pid 42).',
      'Output file: /f',
      'Read the file for output.',
      '[timeout does not apply to background shells; ignored]',
    ].join('\n'))
  })
})

describe('/tasks table', () => {
  const now = Date.parse('2026-01-01T00:10:00Z')
  const record = (id: string, command: string, started: string): ShellRecord => ({
    id, pid: 1, command, cwd: '/', owner: '', started_at: started, status: 'running', exit_code: null, signal: null,
    leader_exited_at: null, ended_at: null, output_file: '/f', bytes: 0, capped: false, last_output_at: null, processes: 1,
  })
  it('renders the README /tasks layout with ages and the kill_shell hint', () => {
    const daemon = { ...record('bg-g7h8i9', 'setsid server &', '2026-01-01T00:00:00Z'), leader_exited_at: '2026-01-01T00:00:01Z', exit_code: 0, processes: 2 }
    expect(renderTasks([
      { ...record('bg-a1b2c3', 'npm run dev', '2026-01-01T00:05:00Z'), bytes: 12_800, last_output_at: '2026-01-01T00:09:57Z' },
      record('bg-d4e5f6', 'a very long command that does not fit the column', '2026-01-01T00:09:30Z'),
      daemon,
    ], now, 'kill_shell')).toBe([
      'Active Background Tasks:',
      '┌────────────────────────────────────────────────────────────────────────────────────────┐',
      '│ ID          Command              Started       Status           Output                 │',
      '├────────────────────────────────────────────────────────────────────────────────────────┤',
      '│ bg-a1b2c3   npm run dev          5 min ago     running          12.5 KiB, last 3s ago  │',
      '│ bg-d4e5f6   a very long command… 30 sec ago    running          no output              │',
      '│ bg-g7h8i9   setsid server &      10 min ago    exit 0, 2 left   no output              │',
      '└────────────────────────────────────────────────────────────────────────────────────────┘',
      '',
      'Use kill_shell with a shell_id to stop a task.',
    ].join('\n'))
  })
  it('names the tool that stops a task here: kill_shell under its name, job_kill, or none', () => {
    const one = [record('bg-a1b2c3', 'sleep 9', '2026-01-01T00:05:00Z')]
    expect(renderTasks(one, now, 'stop_shell').split('\n').at(-1)).toBe('Use stop_shell with a shell_id to stop a task.')
    expect(renderTasks(one, now, 'job_kill').split('\n').at(-1)).toBe('Use job_kill with a job id to stop a task.')
    expect(renderTasks(one, now, undefined).split('\n').at(-1)).toMatch(/^└─+┘$/)
  })
  it('answers in one line when nothing runs', () => {
    expect(renderTasks([], now, 'kill_shell')).toBe('No background shells are running.')
  })
  it('ages in seconds, minutes, hours', () => {
    expect(ago('2026-01-01T00:09:59Z', now)).toBe('1 sec ago')
    expect(ago('2026-01-01T00:00:00Z', now)).toBe('10 min ago')
    expect(ago('2025-12-31T21:00:00Z', now)).toBe('3 h ago')
  })
})
