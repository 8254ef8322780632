// The tool console (npm start without an API key): one call a line against the built plugins on real services.
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import type { ToolExecutionResult } from '@deepseek-ai/dsh-tools'
import { CallSyntaxError, parseArgv, parseLine, type ParsedCall } from './args.ts'
import { bootConsoleHost, type ConsoleHost } from './host.ts'
import { discoverPlugins } from './plugins.ts'

export interface ConsoleOptions {
  /** The checkout root (where packages/ is). */
  root: string
  /** The workspace: where npm start was run from (INIT_CWD). */
  cwd: string
  stdin: Readable & { isTTY?: boolean }
  stdout: Writable
  stderr: Writable
}

export const USAGE = `usage: npm start -- <tool> [key=value ...] [--json]   run one call, print what the model receives
       npm start                                       read one call per line from stdin (help, exit)
values: true/false/null, numbers and JSON arrays/objects are typed; everything else is a string
(a parameter the tool declares as a string always stays a string).`

/** The model-facing text of a result: what the agent loop sends back to the model. */
export function textOf(result: ToolExecutionResult): string {
  return result.content.map((block) => block.type === 'text' ? block.text : `[${block.type} block]`).join('')
}

/** Parameter names a tool declares with type string (their values are never coerced). */
function stringKeysOf(host: ConsoleHost) {
  return (tool: string): ReadonlySet<string> => {
    const schema = host.ctx.tools.get(tool)?.parameters as { properties?: Record<string, { type?: unknown }> } | undefined
    const keys = new Set<string>()
    for (const [key, prop] of Object.entries(schema?.properties ?? {})) if (prop.type === 'string') keys.add(key)
    return keys
  }
}

function helpText(host: ConsoleHost, tool?: string): string {
  const schemas = host.ctx.tools.schemas()
  if (tool !== undefined) {
    const schema = schemas.find((s) => s.name === tool)
    if (schema === undefined) return `unknown tool ${tool} — type help to list the tools`
    const parameters = schema.parameters as { properties?: Record<string, { type?: unknown, description?: string }>, required?: string[] }
    const props = parameters.properties ?? {}
    const required = new Set(parameters.required ?? [])
    const lines = [`${schema.name}: ${schema.description.split('\n')[0] ?? ''}`]
    for (const [key, prop] of Object.entries(props)) {
      lines.push(`  ${key}${required.has(key) ? '' : '?'} (${JSON.stringify(prop.type ?? 'any')}) ${prop.description?.split('\n')[0] ?? ''}`.trimEnd())
    }
    return lines.join('\n')
  }
  const lines = ['tools:']
  for (const s of schemas) lines.push(`  ${s.name.padEnd(16)} ${s.description.split('\n')[0] ?? ''}`)
  lines.push('', 'help <tool> shows its arguments; exit (or end of input) quits and kills background shells.')
  return lines.join('\n')
}

function formatResult(result: ToolExecutionResult, json: boolean): string {
  const text = textOf(result)
  if (!json) return text
  const canonical = result.isError ? { error: result.error } : { value: result.value }
  return `${text}\n--- canonical ${result.isError ? 'error' : 'value'} ---\n${JSON.stringify(canonical, null, 2)}`
}

async function runCall(host: ConsoleHost, call: ParsedCall, json: boolean, out: Writable): Promise<boolean> {
  const result = await host.call(call.tool, call.args)
  out.write(formatResult(result, json) + '\n')
  return !result.isError
}

/** Run the tool console; resolves to the process exit code (0 ok, 1 a failed call, 2 bad usage). */
export async function runConsole(argv: readonly string[], options: ConsoleOptions): Promise<number> {
  // Output closed by its reader (`npm start … | head`): end as at EOF, quietly.
  const gone = new AbortController()
  const onOutputError = (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error
    gone.abort()
  }
  options.stdout.on('error', onOutputError)
  options.stderr.on('error', onOutputError)
  // The plugins' own waits may rest on unref'd handles (a shell must not keep a host alive): the console holds the
  // process open until it is done, so stopping them is never cut short by an empty event loop (Node's exit 13).
  const hold = setInterval(() => {}, 1 << 30)
  try {
    return await runArgs(argv, options, gone.signal)
  } finally {
    // The listeners stay: a write's EPIPE is reported a tick after it, possibly after this returns.
    clearInterval(hold)
  }
}

async function runArgs(argv: readonly string[], options: ConsoleOptions, outputGone: AbortSignal): Promise<number> {
  const json = argv.includes('--json')
  const rest = argv.filter((a) => a !== '--json')
  if (rest[0] === '--help' || rest[0] === '-h') {
    options.stdout.write(USAGE + '\n')
    return 0
  }
  const badFlag = rest.find((a) => a.startsWith('--'))
  if (badFlag !== undefined) {
    options.stderr.write(`unknown option ${badFlag} — the console takes --json only\n${USAGE}\n`)
    return 2
  }
  return await runHost(rest, json, options, outputGone)
}

async function runHost(rest: readonly string[], json: boolean, options: ConsoleOptions, outputGone: AbortSignal): Promise<number> {
  const host = await bootConsoleHost(options.cwd, discoverPlugins(options.root))
  for (const { pkg, reason } of host.skipped) options.stderr.write(`note: ${pkg.name} skipped: ${reason}\n`)
  let stopping: Promise<void> | undefined
  const stop = () => stopping ??= host.dispose()
  const onSignal = (signal: NodeJS.Signals) => {
    void stop().then(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    if (rest.length > 0) {
      if (rest[0] === 'help') {
        options.stdout.write(helpText(host, rest[1]) + '\n')
        return 0
      }
      let call: ParsedCall
      try {
        call = parseArgv(rest, stringKeysOf(host))
      } catch (error) {
        if (!(error instanceof CallSyntaxError)) throw error
        options.stderr.write(`${error.message}\n`)
        return 2
      }
      return await runCall(host, call, json, options.stdout) ? 0 : 1
    }
    return await readLoop(host, json, options, outputGone)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await stop()
  }
}

async function readLoop(host: ConsoleHost, json: boolean, options: ConsoleOptions, outputGone: AbortSignal): Promise<number> {
  const tty = options.stdin.isTTY === true
  const rl = createInterface({ input: options.stdin, ...tty ? { output: options.stdout, prompt: '> ' } : {}, terminal: tty })
  // On a terminal readline takes Ctrl-C itself: end the session (and kill the shells) on it.
  rl.on('SIGINT', () => rl.close())
  // Nobody reads the results any more: run no further call.
  outputGone.addEventListener('abort', () => rl.close(), { once: true })
  if (tty) {
    options.stdout.write(`DSH tool console in ${options.cwd} — ${host.loaded.length} plugin(s) loaded; type help.\n`)
    rl.prompt()
  }
  let failed = false
  for await (const raw of rl) {
    if (outputGone.aborted) break
    const line = raw.trim()
    if (line === 'exit' || line === 'quit') break
    if (line !== '' && !line.startsWith('#')) {
      try {
        if (line === 'help' || line.startsWith('help ')) options.stdout.write(helpText(host, line.slice(5).trim() || undefined) + '\n')
        else if (line.startsWith('/')) await runCommand(host, line, options.stdout)
        else if (!await runCall(host, parseLine(line, stringKeysOf(host)), json, options.stdout)) failed = true
      } catch (error) {
        if (!(error instanceof CallSyntaxError)) throw error
        options.stderr.write(`${error.message}\n`)
        failed = true
      }
    }
    if (tty) rl.prompt()
  }
  rl.close()
  return failed ? 1 : 0
}

/** A human slash command (e.g. /tasks from bash-bg), through the host's command registry. */
async function runCommand(host: ConsoleHost, line: string, out: Writable): Promise<void> {
  const execution = await host.ctx.commands.execute(host.agent, line, [], new AbortController().signal)
  if (execution === undefined) {
    const names = host.ctx.commands.list(host.agent).map((c) => `/${c.name}`).join(', ')
    out.write(`unknown command ${line.split(/\s/)[0]} — available: ${names || 'none'}\n`)
    return
  }
  out.write(`${execution.result.text ?? ''}\n`)
}
