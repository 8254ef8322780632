import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootBashBg, peek, marker, pidsWithMarker, until, type BgHost } from './harness.ts'

let host: BgHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

interface Waited {
  shell_id: string
  pid: number
  output_file: string
  wait: string
  wait_ms: number
  matched_line?: string
  last_lines?: string[]
  exit_code?: number | null
  signal?: string | null
}

const bg = (h: BgHost, args: object, signal?: AbortSignal) =>
  execTool(h.ctx, 'bash_bg', { run_in_background: true, ...args }, signal === undefined ? {} : { signal })

describe('wait_for', () => {
  it('returns on the first matching line (stderr too) and the server keeps running', async () => {
    host = await bootBashBg()
    const mark = marker('server')
    const command = `echo booting; sleep 0.2; echo 'listening on port 4173' >&2; echo 'listening on port 9999'; exec -a ${mark} sleep 60`
    const result = await bg(host, { command, wait_for: 'listening on port \\d+' })
    expect(result.isError).toBe(false)
    const value = result.value as unknown as Waited
    expect(value).toMatchObject({ wait: 'matched', wait_ms: 30000, matched_line: 'listening on port 4173' })
    expect(value.output_file).toMatch(/\.log$/)
    expect(textOf(result)).toBe([
      `Started background shell ${value.shell_id} (pid ${value.pid}).`,
      `Output file: ${value.output_file}`,
      'Matched wait_for: listening on port 4173',
      'Read the file for output.',
    ].join('\n'))
    await until(() => pidsWithMarker(mark, true).length === 1, 'the server after the match')
    expect(peek(host, value.shell_id)?.status).toBe('running')
  })

  it('sees lines written before the wait began, one match per line, and an unterminated line only when it ends', async () => {
    host = await bootBashBg()
    // The line arrives in pieces: the regex must see it whole.
    const result = await bg(host, { command: "printf 'rea'; sleep 0.1; printf 'dy: yes\\nnext\\n'; sleep 60", wait_for: '^ready: yes$' })
    expect(result.value).toMatchObject({ wait: 'matched', matched_line: 'ready: yes' })
  })

  it("returns 'exited' with the exit code and the last lines when the shell ends first", async () => {
    host = await bootBashBg()
    const result = await bg(host, { command: 'for i in $(seq 1 15); do echo line $i; done; echo fatal: port in use >&2; exit 3', wait_for: 'listening' })
    const value = result.value as unknown as Waited
    expect(value).toMatchObject({ wait: 'exited', exit_code: 3, signal: null })
    expect(value.last_lines).toEqual(['line 7', 'line 8', 'line 9', 'line 10', 'line 11', 'line 12', 'line 13', 'line 14', 'line 15', 'fatal: port in use'])
    expect(textOf(result)).toBe([
      `Background shell ${value.shell_id} (pid ${value.pid}) ended (exit code 3) before a line matched wait_for.`,
      `Output file: ${value.output_file}`,
      'Last lines:',
      ...value.last_lines ?? [],
    ].join('\n'))
    expect(peek(host, value.shell_id)?.status).toBe('completed')
  })

  it("returns 'timeout' after timeout ms with the last lines; the shell keeps running", async () => {
    host = await bootBashBg()
    const result = await bg(host, { command: 'echo starting; echo -n partial; sleep 60', wait_for: 'never', timeout: 300 })
    const value = result.value as unknown as Waited
    expect(value).toMatchObject({ wait: 'timeout', wait_ms: 300, last_lines: ['starting', 'partial'] })
    expect(value).not.toHaveProperty('timeout_ignored')
    expect(textOf(result)).toContain('No line matched wait_for in 300 ms; the shell is still running. Last lines:\nstarting\npartial')
    expect(peek(host, value.shell_id)?.status).toBe('running')
  })

  it('keeps waiting while a process the leader left behind runs, and matches its output', async () => {
    host = await bootBashBg()
    const result = await bg(host, { command: '(sleep 0.3; echo server ready; sleep 60) & exit 0', wait_for: 'ready' })
    expect(result.value).toMatchObject({ wait: 'matched', matched_line: 'server ready' })
  })

  it('is abortable: the call ends, the shell keeps running', async () => {
    host = await bootBashBg()
    const controller = new AbortController()
    const pending = bg(host, { command: 'sleep 60', wait_for: 'never' }, controller.signal)
    await until(() => host?.shells.running().length === 1, 'the shell to start')
    controller.abort()
    const result = await pending
    expect(result.isError).toBe(true)
    expect(host.shells.running()).toHaveLength(1)
  })

  it('runs in linear time: patterns that backtrack exponentially end at their timeout, and still match when they can', async () => {
    host = await bootBashBg()
    const line = `${'a'.repeat(4000)}!`
    for (const wait_for of ['(a+)+$', '(\\S+\\s*)*Listening on', '(.*)*ready']) {
      const result = await bg(host, { command: `echo '${line}'; sleep 60`, wait_for, timeout: 300 })
      expect(result.value, wait_for).toMatchObject({ wait: 'timeout' })
    }
    const matched = await bg(host, { command: "echo 'ab cd Listening on 80'; sleep 60", wait_for: '(\\S+\\s*)*Listening on \\d+' })
    expect(matched.value).toMatchObject({ wait: 'matched', matched_line: 'ab cd Listening on 80' })
    const named = await bg(host, { command: "echo 'port=8080'; sleep 60", wait_for: 'port=(?<port>\\d+)$' })
    expect(named.value).toMatchObject({ wait: 'matched', matched_line: 'port=8080' })
  })

  it('refuses what a linear-time matcher cannot run, and an oversized pattern, naming wait_for and what to write', async () => {
    host = await bootBashBg()
    const refusal = async (wait_for: string) => {
      const result = await bg(host as BgHost, { command: 'true', wait_for })
      expect(result.error?.info?.code).toBe('INVALID_ARGS')
      return result.error?.message
    }
    expect(await refusal('ready(?= on)')).toBe('invalid wait_for: "ready(?= on)" uses a lookahead (?=…), which the linear-time matcher cannot run — match the line without it, e.g. "ready on port \\d+" instead of "ready(?= on)"')
    expect(await refusal('(?<!not )ready')).toContain('uses a lookbehind (?<!…)')
    expect(await refusal('(\\w)\\1')).toContain('uses a backreference (\\1)')
    expect(await refusal('(?<q>["\'])x\\k<q>')).toContain('uses a named backreference')
    expect(await refusal('x'.repeat(1001))).toBe(`invalid wait_for: "${'x'.repeat(120)}…" (1001 characters) is 1001 characters, over the 1000-character limit — match a short, distinctive part of the ready line`)
    expect(host.shells.list(undefined)).toEqual([])
    // Inside a class, (?= is three literal characters.
    const literal = await bg(host, { command: "echo '(?=ok'; sleep 60", wait_for: '[(?=]ok' })
    expect(literal.value).toMatchObject({ wait: 'matched', matched_line: '(?=ok' })
  })

  it('refuses an invalid regex, wait_for without run_in_background, and a wait over the maximum, naming the argument', async () => {
    host = await bootBashBg({ maxTimeoutMs: 1000, waitTimeoutMs: 500, timeoutMs: 1000 })
    const bad = await bg(host, { command: 'true', wait_for: 'port (\\d+' })
    expect(bad.error?.message).toBe('invalid wait_for: "port (\\\\d+" is not a JavaScript regular expression (Invalid regular expression: /port (\\d+/: Unterminated group) — escape special characters with \\, e.g. "listening on port \\d+"')
    expect(bad.error?.info?.code).toBe('INVALID_ARGS')
    const foreground = await execTool(host.ctx, 'bash_bg', { command: 'true', wait_for: 'x' })
    expect(foreground.error?.message).toBe('invalid wait_for: it waits for a line of a background shell — add run_in_background: true, or omit wait_for')
    const long = await bg(host, { command: 'true', wait_for: 'x', timeout: 5000 })
    expect(long.error?.message).toBe('invalid timeout: expected milliseconds from 1 to 1000, got 5000 — omit it to wait the default 500')
    expect(host.shells.list(undefined)).toEqual([])
  })
})

describe('optional arguments sent empty', () => {
  it('"" and null count as absent for every optional argument', async () => {
    host = await bootBashBg()
    const fg = await execTool(host.ctx, 'bash_bg', { command: 'echo hi', timeout: null, description: '', run_in_background: null, wait_for: '' })
    expect(fg.isError).toBe(false)
    expect(fg.value).toMatchObject({ kind: 'foreground', stdout: { text: 'hi\n', cut: 0 }, timeout_ms: 120000 })
    const back = await execTool(host.ctx, 'bash_bg', { command: 'sleep 60', run_in_background: true, timeout: '', wait_for: null, description: null })
    expect(back.isError).toBe(false)
    expect(back.value).not.toHaveProperty('timeout_ignored')
    expect(back.value).not.toHaveProperty('wait')
    // A present, wrong value is still an error; an empty command is too (it is required).
    expect((await execTool(host.ctx, 'bash_bg', { command: 'true', timeout: 'soon' })).error?.info?.code).toBe('INVALID_ARGS')
    expect((await execTool(host.ctx, 'bash_bg', { command: '' })).error?.message).toMatch(/^invalid command/)
  })
})
