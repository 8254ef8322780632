/** Pure: the canonical bash_bg value -> the text the model reads. */

export interface StreamValue {
  text: string
  /** Bytes cut from the start of the stream. */
  cut: number
}

export interface ForegroundValue {
  kind: 'foreground'
  exit_code: number | null
  signal: string | null
  timed_out: boolean
  timeout_ms: number
  stdout: StreamValue
  stderr: StreamValue
  leftovers_stopped: number
  /** True when a process outside the group (setsid) still held the output open and the call stopped reading it. */
  output_held_open: boolean
}

export interface BackgroundValue {
  kind: 'background'
  shell_id: string
  pid: number
  output_file: string
  job_id?: string
  /** True when the call named a timeout, which background shells ignore. */
  timeout_ignored?: boolean
  /** The tool that stops it in this composition (kill_shell, or the host's job_kill), if any. */
  stop_with?: string
  /** How a wait_for wait ended. */
  wait?: 'matched' | 'exited' | 'timeout'
  /** The wait's limit (ms). */
  wait_ms?: number
  /** The first output line that matched wait_for. */
  matched_line?: string
  /** The last lines of output, when no line matched. */
  last_lines?: string[]
  /** How the shell ended ('exited'): the leader's exit code, or the signal that ended it. */
  exit_code?: number | null
  signal?: string | null
}

export type BashBgValue = ForegroundValue | BackgroundValue

export const OUTPUT_HELD_OPEN = '[stopped reading output: a process that left this command\'s process group (setsid) still holds it open and was not stopped; use run_in_background for servers]'

function streamText(name: string, stream: StreamValue): string {
  if (stream.cut === 0) return stream.text
  return `[${name} cut: the first ${stream.cut} bytes are not shown; redirect to a file or use run_in_background to keep everything]\n${stream.text}`
}

function renderForeground(value: ForegroundValue): string {
  let body = streamText('stdout', value.stdout)
  const err = streamText('stderr', value.stderr)
  if (err.length > 0) {
    if (body.length > 0 && !body.endsWith('\n')) body += '\n'
    body += `[stderr]\n${err}`
  }
  if (body.length === 0) body = '(no output)'
  const markers: string[] = []
  if (value.leftovers_stopped > 0) {
    markers.push(`[stopped ${value.leftovers_stopped} leftover process${value.leftovers_stopped === 1 ? '' : 'es'} of this command; use run_in_background for servers]`)
  }
  if (value.output_held_open) markers.push(OUTPUT_HELD_OPEN)
  if (value.timed_out) markers.push(`[timed out after ${value.timeout_ms}ms]`)
  if (value.signal !== null) markers.push(`[killed by signal: ${value.signal}]`)
  else if (value.exit_code !== 0) markers.push(`[exit code: ${value.exit_code}]`)
  if (markers.length === 0) return body
  if (!body.endsWith('\n')) body += '\n'
  return body + markers.join('\n')
}

function lastLines(lines: readonly string[] | undefined): string {
  return lines === undefined || lines.length === 0 ? 'No output.' : `Last lines:\n${lines.join('\n')}`
}

function renderBackground(value: BackgroundValue): string {
  const job = value.job_id === undefined ? '' : `, job ${value.job_id}`
  if (value.wait === 'exited') {
    const how = value.signal === null || value.signal === undefined ? `exit code ${value.exit_code ?? 0}` : `signal ${value.signal}`
    return [
      `Background shell ${value.shell_id} (pid ${value.pid}${job}) ended (${how}) before a line matched wait_for.`,
      `Output file: ${value.output_file}`,
      lastLines(value.last_lines),
    ].join('\n')
  }
  const lines = [`Started background shell ${value.shell_id} (pid ${value.pid}${job}).`, `Output file: ${value.output_file}`]
  if (value.wait === 'matched') lines.push(`Matched wait_for: ${value.matched_line ?? ''}`)
  if (value.wait === 'timeout') lines.push(`No line matched wait_for in ${value.wait_ms ?? 0} ms; the shell is still running. ${lastLines(value.last_lines)}`)
  lines.push(value.stop_with === undefined ? 'Read the file for output.' : `Read the file for output; stop the shell with ${value.stop_with}.`)
  if (value.timeout_ignored === true) lines.push('[timeout does not apply to background shells; ignored]')
  return lines.join('\n')
}

export function render(value: BashBgValue): string {
  return value.kind === 'foreground' ? renderForeground(value) : renderBackground(value)
}
