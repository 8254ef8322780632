/** The bash_bg tool: foreground runs, background shells, and their host jobs. */
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { defineTool, type ToolDefinition, type ToolExecution } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-jobs'
import { aborted, blanksAsAbsent, toolNamed } from '@gencode-ai/dsh-tool-common'
import type { Config } from '../config.ts'
import type { Launch, ShellSnapshot } from '../contract.ts'
import { planLaunch } from '../shells/launch.ts'
import type { NoticeDelivery } from '../shells/delivery.ts'
import type { ShellRegistry } from '../shells/registry.ts'
import type { BackgroundShell } from '../shells/shell.ts'
import { worldFor, type WorldParts } from '../shells/world.ts'
import type { ShellWorld } from '../shells/world-types.ts'
import { compileLinePattern, type LinePattern } from './line-pattern.ts'
import { presentCall, presentResult } from './present.ts'
import { foregroundValue, render, VALUE_SCHEMA, type BackgroundValue, type BashBgValue } from './render.ts'
import { waitForLine } from './wait-for.ts'
import { Watches } from './watches.ts'

declare module '@deepseek-ai/dsh-jobs' {
  interface JobKindMap {
    bash_bg: 'bash_bg'
  }
}

/** Linux's MAX_ARG_STRLEN (32 pages, its NUL included): the longest `bash -c` command that can spawn. */
const MAX_COMMAND_BYTES = 131_071

/** A command as an error lists it: one line, at most 40 characters. */
function cut(command: string): string {
  const flat = command.replace(/\s+/g, ' ').trim()
  return flat.length > 40 ? `${flat.slice(0, 39)}…` : flat
}

type Args = { command: string, timeout?: number, description?: string, run_in_background?: boolean, wait_for?: string }
  & { watch?: string, watch_max?: number }

/** A command that only sleeps: moving it to the background would only keep a timer. */
const BARE_SLEEP = /^\s*sleep\s+(?:[\d.]+[smhd]?|infinity)\s*;?\s*$/

/** Most lines a watch may be asked to report. */
const MAX_WATCH = 200
const DEFAULT_WATCH = 20

type Started = { value: BackgroundValue, shell: BackgroundShell }

/** `worlds`: what each call's world is made of (the plugin's local host and the rest); `delivery`: the plugin's notice lanes. */
export function createTool(
  ctx: Context, config: Config, registry: ShellRegistry, worlds: WorldParts, delivery: NoticeDelivery,
): ToolDefinition {
  const watches = new Watches(ctx, delivery, registry)

  /** The watch a call asks for, checked: its pattern and limit; the owner its notices go to. */
  const validateWatch = (args: Args, owner: Agent | undefined) => {
    if (args.watch_max !== undefined && (!Number.isInteger(args.watch_max) || args.watch_max < 1 || args.watch_max > MAX_WATCH)) {
      throw new HarnessError(`invalid watch_max: expected a whole number from 1 to ${MAX_WATCH}, got ${JSON.stringify(args.watch_max)} — omit it for ${DEFAULT_WATCH}`, 'INVALID_ARGS')
    }
    if (args.watch === undefined) {
      if (args.watch_max !== undefined) throw new HarnessError('invalid watch_max: it bounds a watch — add watch, or omit watch_max', 'INVALID_ARGS')
      return undefined
    }
    if (args.run_in_background !== true) {
      throw new HarnessError('invalid watch: it watches the lines of a background shell — add run_in_background: true, or omit watch', 'INVALID_ARGS')
    }
    if (owner === undefined) throw new HarnessError('invalid watch: its notices go to the calling agent, and this call has none — omit watch and read the log', 'INVALID_ARGS')
    return { owner, source: args.watch, pattern: compileLinePattern(args.watch, 'watch'), max: args.watch_max ?? DEFAULT_WATCH }
  }

  /** The wait_for pattern, when the call asks to wait. */
  const validate = (args: Args): LinePattern | undefined => {
    if (args.command.trim().length === 0) {
      throw new HarnessError('invalid command: expected a non-empty bash command, got an empty string', 'INVALID_ARGS')
    }
    // Both would fail inside spawn() with a message that names no argument (or blames bash being missing).
    if (args.command.includes('\0')) {
      throw new HarnessError("invalid command: it contains a NUL character, which no process argument can carry — remove it (printf '\\0' writes one)", 'INVALID_ARGS')
    }
    const bytes = Buffer.byteLength(args.command)
    if (bytes > MAX_COMMAND_BYTES) {
      throw new HarnessError(`invalid command: ${bytes} bytes is over the ${MAX_COMMAND_BYTES}-byte limit Linux puts on one process argument — write the script to a file and run that file`, 'INVALID_ARGS')
    }
    let pattern: LinePattern | undefined
    if (args.wait_for !== undefined) {
      if (args.run_in_background !== true) {
        throw new HarnessError('invalid wait_for: it waits for a line of a background shell — add run_in_background: true, or omit wait_for', 'INVALID_ARGS')
      }
      pattern = compileLinePattern(args.wait_for)
    }
    // A background shell has no timeout (the value says it was ignored); with wait_for, it bounds the wait.
    const timeout = args.run_in_background === true && pattern === undefined ? undefined : args.timeout
    if (timeout !== undefined && (!Number.isFinite(timeout) || timeout <= 0 || timeout > config.maxTimeoutMs)) {
      const omit = pattern === undefined
        ? `omit it for the default ${config.timeoutMs}, or use run_in_background for longer commands`
        : `omit it to wait the default ${config.waitTimeoutMs}`
      throw new HarnessError(`invalid timeout: expected milliseconds from 1 to ${config.maxTimeoutMs}, got ${JSON.stringify(timeout)} — ${omit}`, 'INVALID_ARGS')
    }
    return pattern
  }

  const startBackground = async (args: Args, launch: Launch, world: ShellWorld, exec: ToolExecution): Promise<Started> => {
    const running = registry.running(exec.agent?.id ?? '')
    if (running.length + registry.startingFor(exec.agent?.id ?? '') >= config.maxEntries) {
      // Each command cut as /tasks cuts it: ten 100 KB commands must not make a megabyte of error.
      const ids = running.map((record) => `${record.id} (${cut(record.command)}; ${registry.liveness(record)})`).join(', ')
      const tool = registry.stopTool()
      const hint = tool === undefined ? 'wait for one to finish, then retry' : `stop one with ${tool}, then retry`
      throw new HarnessError(`too many background shells: this session already runs ${running.length} (maxEntries ${config.maxEntries}): ${ids} — ${hint}`, 'TOO_MANY_SHELLS')
    }
    const shell = await registry.start({ command: args.command, caller: exec.agent, launch, world })
    const value: BackgroundValue = {
      ...shellValue(shell.record, exec),
      ...args.timeout !== undefined && args.wait_for === undefined ? { timeout_ignored: true } : {},
      ...world.limits === undefined ? {} : { world: 'subprocess' as const, world_limits: world.limits },
    }
    return { value, shell }
  }

  /** A background shell as the value names it: where it is, how to read its new output and how to stop it. */
  const shellValue = (record: ShellSnapshot, exec: ToolExecution): BackgroundValue => {
    const stopWith = registry.stopTool(record)
    const readTool = toolNamed(ctx, exec, 'read', 'read_file')
    const readWith = record.job_id !== undefined && ctx.tools.get('job_output', exec.agent) !== undefined
      ? 'job_output'
      : ctx.tools.get(readTool, exec.agent) === undefined ? undefined : readTool
    return {
      kind: 'background',
      shell_id: record.id,
      pid: record.pid,
      output_file: record.output_file,
      ...record.job_id !== undefined ? { job_id: record.job_id } : {},
      ...stopWith === undefined ? {} : { stop_with: stopWith },
      ...readWith === undefined ? {} : { read_with: readWith },
    }
  }

  /** Why a foreground run reaching its timeout is stopped rather than moved (undefined: it moves). */
  const refuseMove = (args: Args, owner: string): string | undefined => {
    if (BARE_SLEEP.test(args.command)) return 'a bare sleep only waits; it is stopped'
    const running = registry.running(owner).length
    if (running >= config.maxEntries) return `this session already runs ${running} background shells (maxEntries ${config.maxEntries})`
    return undefined
  }

  /** A foreground run in the local world, with a jobs controller serving the call, may move to the background at its timeout. */
  const runInForeground = async (args: Args, launch: Launch, world: ShellWorld, exec: ToolExecution): Promise<BashBgValue> => {
    const timeoutMs = args.timeout ?? config.timeoutMs
    const caller = exec.agent
    const movable = config.onTimeout === 'background' && caller !== undefined && world.limits === undefined && registry.jobsServe(caller)
    const move = movable ? registry.mover({ command: args.command, caller, launch, world }, () => refuseMove(args, caller.id)) : undefined
    const options = { timeoutMs, maxOutputBytes: config.maxOutputBytes, signal: exec.signal }
    const run = await world.run(launch, move === undefined ? options : { ...options, move })
    if (run.aborted) throw aborted()
    const moved = run.moved === true && move !== undefined ? registry.find(move.shellId, caller) : undefined
    if (moved === undefined) return foregroundValue(run)
    return { ...shellValue(moved, exec), moved_after_ms: timeoutMs, stdout: run.stdout, stderr: run.stderr }
  }

  /** Wait for a matching line, the shell's end, or the timeout (the shell keeps running). */
  const waitFor = async ({ value, shell }: Started, args: Args, pattern: LinePattern, signal: AbortSignal): Promise<BackgroundValue> => {
    const waitMs = args.timeout ?? config.waitTimeoutMs
    const stillRunning = `shell ${value.shell_id} keeps running; its output is in ${value.output_file}`
    const result = await waitForLine(shell, pattern, waitMs, signal, () => aborted(`tool call aborted while waiting for wait_for; ${stillRunning}`))
    if (result.wait === 'matched') return { ...value, wait: 'matched', wait_ms: waitMs, matched_line: result.matched_line ?? '' }
    const untested = result.untested_lines === undefined ? {} : { untested_lines: result.untested_lines }
    if (result.wait === 'timeout') return { ...value, wait: 'timeout', wait_ms: waitMs, last_lines: result.last_lines, ...untested }
    if (result.wait === 'capped' || result.wait === 'log-failed') {
      const problem = result.log_problem === undefined ? {} : { log_problem: result.log_problem }
      return { ...value, wait: result.wait, wait_ms: waitMs, last_lines: result.last_lines, ...problem, ...untested }
    }
    const { stop_with: _, ...ended } = value
    const problem = result.ended?.log_problem
    return {
      ...ended, wait: 'exited', wait_ms: waitMs, last_lines: result.last_lines, exit_code: result.ended?.exit_code ?? null, signal: result.ended?.signal ?? null,
      ...problem === undefined ? {} : { log_problem: problem }, ...untested,
    }
  }

  return blanksAsAbsent(defineTool({
    name: config.toolName,
    description: 'Run a bash command. Foreground: returns stdout, stderr and the exit code. '
      + 'With run_in_background: true it returns at once with a shell_id and an output_file.',
    parameters: {
      command: { type: 'string', required: true, description: 'The bash command.' },
      timeout: { type: 'number', description: `ms: foreground timeout (default ${config.timeoutMs}, max ${config.maxTimeoutMs}), or the wait_for wait (default ${config.waitTimeoutMs}).` },
      description: { type: 'string', description: 'What the command does, in 5-10 words.' },
      run_in_background: { type: 'boolean', description: 'Run in the background; no timeout applies.' },
      wait_for: { type: 'string', description: 'With run_in_background: a regex; return once an output line matches (or the shell ends, or timeout).' },
      watch: { type: 'string', description: 'With run_in_background: a regex; matching output lines reach you as notices.' },
      watch_max: { type: 'integer', description: `Matches until the watch ends (default ${DEFAULT_WATCH}, max ${MAX_WATCH}).` },
    },
    output: {
      schema: VALUE_SCHEMA,
      render: (_args, value) => [{ type: 'text', text: render(value) }],
      presentationMeta: (_args, value) =>
        value.kind === 'foreground' ? { exit_code: value.exit_code, signal: value.signal } : { shell_id: value.shell_id },
    },
    async execute(args, exec): Promise<BashBgValue> {
      const pattern = validate(args)
      const watch = validateWatch(args, exec.agent)
      // Chosen once, first: a call with no world to run in refuses before anything is looked at or started.
      const world = worldFor(ctx, worlds)
      const launch = await planLaunch(ctx, config.toolName, world, args.command, exec)
      // Once started, a shell belongs to the registry (and the host job), never to this call's signal.
      // The shell limit is checked after this last await, so concurrent calls cannot both pass it.
      if (exec.signal.aborted) throw aborted()
      if (args.run_in_background === true) {
        const started = await startBackground(args, launch, world, exec)
        // In the tick the shell started (its log's pieces are told after that tick): the watch sees its first byte.
        if (watch !== undefined) watches.arm(started.shell, watch.owner, watch)
        return pattern === undefined ? started.value : waitFor(started, args, pattern, exec.signal)
      }
      return runInForeground(args, launch, world, exec)
    },
    presentCall,
    presentResult,
  }), ['command'])
}
