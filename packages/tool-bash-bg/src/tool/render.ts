/** Pure: the canonical value (a foreground run's, mapped from the shells' result) -> the text the model reads. */
import type { InferValue } from '@deepseek-ai/dsh-tools'
import { escapeText } from '@gencode-ai/dsh-tool-common'
import type { RunResult } from '../shells/world-types.ts'

/**
 * A foreground stream's kept tail, and how many bytes were cut from its start; `binary`: the output was binary, so
 * no text is kept and `cut` is its whole size.
 */
const STREAM_PROPERTIES = {
  text: { type: 'string', required: true }, cut: { type: 'integer', required: true }, binary: { type: 'boolean' },
} as const
const STREAM = { type: 'object', additionalProperties: false, required: true, properties: STREAM_PROPERTIES } as const
/** The output so far of a run that moved to the background. */
const STREAM_SO_FAR = { type: 'object', additionalProperties: false, properties: STREAM_PROPERTIES } as const

/** Present when the command ran through ctx.subprocess (another execution world), with what that world cannot promise. */
const WORLD = { world: { type: 'string', enum: ['subprocess'] }, world_limits: { type: 'string' } } as const

/** The canonical value: a foreground run, or a background start (with how a wait_for wait ended). */
export const VALUE_SCHEMA = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        kind: { type: 'string', const: 'foreground', required: true },
        exit_code: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
        signal: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
        timed_out: { type: 'boolean', required: true },
        timeout_ms: { type: 'number', required: true },
        stdout: STREAM,
        stderr: STREAM,
        leftovers_stopped: { type: 'integer', required: true },
        leftovers_running: { type: 'array', items: { type: 'integer' } },
        output_held_open: { type: 'boolean', required: true },
        not_moved: { type: 'string' },
        ...WORLD,
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        kind: { type: 'string', const: 'background', required: true },
        shell_id: { type: 'string', required: true },
        pid: { type: 'integer', required: true },
        output_file: { type: 'string', required: true },
        job_id: { type: 'string' },
        timeout_ignored: { type: 'boolean' },
        stop_with: { type: 'string' },
        read_with: { type: 'string' },
        wait: { type: 'string', enum: ['matched', 'exited', 'timeout', 'capped', 'log-failed'] },
        wait_ms: { type: 'number' },
        matched_line: { type: 'string' },
        last_lines: { type: 'array', items: { type: 'string' } },
        exit_code: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
        signal: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        log_problem: { type: 'string' },
        untested_lines: { type: 'integer' },
        moved_after_ms: { type: 'number' },
        stdout: STREAM_SO_FAR,
        stderr: STREAM_SO_FAR,
        ...WORLD,
      },
    },
  ],
} as const

export type BashBgValue = InferValue<typeof VALUE_SCHEMA>
export type ForegroundValue = Extract<BashBgValue, { kind: 'foreground' }>
export type BackgroundValue = Extract<BashBgValue, { kind: 'background' }>

/** A foreground run as the canonical value: another world's run is named as such. */
export function foregroundValue({ aborted: _, ...run }: RunResult): ForegroundValue {
  return { kind: 'foreground', ...run, ...run.world_limits === undefined ? {} : { world: 'subprocess' as const } }
}

export const OUTPUT_HELD_OPEN = '[stopped reading output: a process that left this command\'s process group (setsid) still holds it open and was not stopped; use run_in_background for servers]'

/** Text with its controls escaped (nothing in it can act on a terminal or forge a line); binary output described. */
function streamText(name: string, stream: ForegroundValue['stdout']): string {
  if (stream.binary === true) {
    return `[${name}: ${stream.cut} bytes of binary output, not shown and not kept; redirect it to a file to keep it, then inspect that file (xxd, file)]`
  }
  const text = escapeText(stream.text)
  if (stream.cut === 0) return text
  return `[${name} cut: the first ${stream.cut} bytes are not shown; redirect to a file or use run_in_background to keep everything]\n${text}`
}

/** Both streams' kept text, stderr after its tag ('' when there was none). */
function foregroundBody(stdout: ForegroundValue['stdout'], stderr: ForegroundValue['stderr']): string {
  let body = streamText('stdout', stdout)
  const err = streamText('stderr', stderr)
  if (err.length > 0) {
    if (body.length > 0 && !body.endsWith('\n')) body += '\n'
    body += `[stderr]\n${err}`
  }
  return body
}

function renderForeground(value: ForegroundValue): string {
  let body = foregroundBody(value.stdout, value.stderr)
  if (body.length === 0) body = '(no output)'
  const markers: string[] = []
  // The seam counts no processes: it knows only that something of the tree was left.
  if (value.leftovers_stopped > 0 && value.world !== undefined) markers.push('[stopped what this command left running; use run_in_background for servers]')
  else if (value.leftovers_stopped > 0) {
    markers.push(`[stopped ${value.leftovers_stopped} leftover process${value.leftovers_stopped === 1 ? '' : 'es'} of this command; use run_in_background for servers]`)
  }
  const running = value.leftovers_running ?? []
  if (running.length > 0) {
    const pids = running.length === 1 ? `pid ${running[0]}` : `pids ${running.join(', ')}`
    markers.push(`[${pids} left the command's group and keep${running.length === 1 ? 's' : ''} running; use run_in_background]`)
  }
  if (value.output_held_open) markers.push(OUTPUT_HELD_OPEN)
  if (value.timed_out) markers.push(`[timed out after ${value.timeout_ms}ms]`)
  if (value.not_moved !== undefined) markers.push(`[not moved to the background: ${value.not_moved}]`)
  if (value.signal !== null) markers.push(`[killed by signal: ${value.signal}]`)
  else if (value.exit_code !== 0) markers.push(`[exit code: ${value.exit_code}]`)
  // Said when a stop happened: only then does the seam's one stop matter.
  if (value.world_limits !== undefined && (value.timed_out || value.leftovers_stopped > 0)) markers.push(`[${value.world_limits}]`)
  if (markers.length === 0) return body
  if (!body.endsWith('\n')) body += '\n'
  return body + markers.join('\n')
}

function lastLines(lines: readonly string[] | undefined): string {
  return lines === undefined || lines.length === 0 ? 'No output.' : `Last lines:\n${lines.map(escapeText).join('\n')}`
}

/** Lines the wait never tested: they came faster than its pattern could be matched. */
const untested = (count: number): string =>
  `[${count} line${count === 1 ? '' : 's'} came faster than wait_for could test them and ${count === 1 ? 'was' : 'were'} not tested: read the file for them]`

/** Where new output is read: the host's job_output (only what is new), else read_file from the next line, else the file. */
function readHint(value: BackgroundValue): string {
  if (value.read_with === undefined) return 'Read the file for output'
  if (value.job_id !== undefined) return `Read new output with ${value.read_with} ${value.job_id}`
  return `Read output with ${value.read_with} (offset=<next line> for new lines only)`
}

/** A foreground run that moved to the background at its timeout: the output so far, and the shell it runs on as. */
function renderMoved(value: BackgroundValue): string {
  const job = value.job_id === undefined ? '' : `, job ${value.job_id}`
  const body = foregroundBody(value.stdout ?? { text: '', cut: 0 }, value.stderr ?? { text: '', cut: 0 })
  return [
    ...body === '' ? [] : [body.endsWith('\n') ? body.slice(0, -1) : body],
    `[timed out after ${value.moved_after_ms ?? 0}ms: still running as ${value.shell_id} — do not run it again; you will be told when it ends]`,
    `Shell ${value.shell_id} (pid ${value.pid}${job}). Output file: ${value.output_file}`,
    `${readHint(value)}${value.stop_with === undefined ? '.' : `; stop it with ${value.stop_with}.`}`,
  ].join('\n')
}

function renderBackground(value: BackgroundValue): string {
  if (value.moved_after_ms !== undefined) return renderMoved(value)
  const job = value.job_id === undefined ? '' : `, job ${value.job_id}`
  if (value.wait === 'exited') {
    const how = value.signal === null || value.signal === undefined ? `exit code ${value.exit_code ?? 0}` : `signal ${value.signal}`
    return [
      `Background shell ${value.shell_id} (pid ${value.pid}${job}) ended (${how}) before a line matched wait_for.`,
      `Output file: ${value.output_file}${value.log_problem === undefined ? '' : ` (${value.log_problem}: it is not the whole output)`}`,
      lastLines(value.last_lines),
      ...value.untested_lines === undefined ? [] : [untested(value.untested_lines)],
    ].join('\n')
  }
  const lines = [`Started background shell ${value.shell_id} (pid ${value.pid}${job}).`, `Output file: ${value.output_file}`]
  if (value.wait === 'matched') lines.push(`Matched wait_for: ${escapeText(value.matched_line ?? '')}`)
  if (value.wait === 'capped') lines.push(`The log reached its cap before a line matched wait_for: no later line can match; the shell is still running. ${lastLines(value.last_lines)}`)
  if (value.wait === 'log-failed') lines.push(`The ${value.log_problem ?? 'log failed'} before a line matched wait_for: no later line can match; the shell is still running. ${lastLines(value.last_lines)}`)
  if (value.wait === 'timeout') lines.push(`No line matched wait_for in ${value.wait_ms ?? 0} ms; the shell is still running. ${lastLines(value.last_lines)}`)
  if (value.untested_lines !== undefined) lines.push(untested(value.untested_lines))
  lines.push(`${readHint(value)}${value.stop_with === undefined ? '.' : `; stop the shell with ${value.stop_with}.`}`)
  if (value.timeout_ignored === true) lines.push('[timeout does not apply to background shells; ignored]')
  if (value.world_limits !== undefined) lines.push(`[${value.world_limits}]`)
  return lines.join('\n')
}

export function render(value: BashBgValue): string {
  return value.kind === 'foreground' ? renderForeground(value) : renderBackground(value)
}
