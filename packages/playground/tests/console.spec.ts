// The main job without a key: the tool console (scripts/start.mjs as npm start runs it).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, makeTmpDir, removeTmpDir, runTurn, textTurn, toolResults, toolTurn } from '@gencode-ai/testkit'
import { CallSyntaxError, parseArgv, parseLine, tokenizeLine } from '../src/args.ts'
import { discoverPlugins } from '../src/plugins.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const start = join(root, 'scripts', 'start.mjs')

function startConsole(args: string[], cwd: string): ChildProcessWithoutNullStreams {
  const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: cwd }
  delete env.DEEPSEEK_API_KEY
  return spawn(process.execPath, [start, ...args], { cwd: root, env })
}

function finish(child: ChildProcessWithoutNullStreams): Promise<{ code: number | null, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

function alive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

describe('call syntax', () => {
  it('types true/false/null, numbers and JSON; keeps declared string parameters as text', () => {
    expect(parseArgv(['list_directory', 'path=src', 'recursive=true', 'depth=2', 'ignore=["*.log","dist"]', 'x=null'])).toEqual({
      tool: 'list_directory',
      args: { path: 'src', recursive: true, depth: 2, ignore: ['*.log', 'dist'], x: null },
    })
    expect(parseArgv(['read_file', 'file_path=123', 'limit=5'], () => new Set(['file_path'])).args).toEqual({ file_path: '123', limit: 5 })
    expect(parseArgv(['bash_bg', 'command=echo a=b'], () => new Set(['command'])).args).toEqual({ command: 'echo a=b' })
  })

  it('reads console lines with quotes and JSON that contains spaces', () => {
    expect(parseLine('bash_bg command="echo \\"hi\\"; sleep 1" run_in_background=true').args).toEqual({ command: 'echo "hi"; sleep 1', run_in_background: true })
    expect(parseLine(`list_directory path='my dir' ignore=[".*", "node_modules"]`).args).toEqual({ path: 'my dir', ignore: ['.*', 'node_modules'] })
    expect(parseLine('read_file file_path="42"').args).toEqual({ file_path: '42' })
    expect(tokenizeLine('  a  b=1 ').map((t) => t.text)).toEqual(['a', 'b=1'])
  })

  it('rejects malformed input with a message that says what would work', () => {
    const message = (fn: () => unknown) => {
      try {
        fn()
      } catch (error) {
        expect(error).toBeInstanceOf(CallSyntaxError)
        return (error as Error).message
      }
      throw new Error('no error')
    }
    expect(message(() => parseArgv(['list_directory', 'src']))).toBe('argument "src" is not key=value — write it as name=value, e.g. path=src')
    expect(message(() => parseArgv(['list_directory', 'ignore=[".*"']))).toBe(`argument ignore is not valid JSON: [".*" — write arrays as ignore='["a","b"]' (quote the value for the shell)`)
    expect(message(() => parseArgv(['list_directory', 'path=a', 'path=b']))).toBe('argument path is given twice — give each argument once')
    expect(message(() => parseArgv(['path=.']))).toBe('the call starts with "path=.", not a tool name — write <tool> key=value ..., e.g. list_directory path=.')
    expect(message(() => parseArgv([]))).toBe('no tool named — write a call as <tool> key=value ..., or help to list the tools')
    expect(message(() => parseArgv(['t', '=x']))).toBe('argument "=x" is not key=value — write it as name=value, e.g. path=src')
    expect(message(() => parseArgv(['t', 'a-b=1']))).toBe('argument name "a-b" is not a parameter name — use letters, digits and _ (e.g. file_path=README.md)')
    expect(message(() => parseLine('bash_bg command="echo'))).toBe('unterminated " quote in: "echo — close the quote')
    expect(message(() => parseLine('list_directory ignore=["a"'))).toBe('unbalanced brackets in: ["a" — close every [ and {')
  })
})

describe('npm start without a key: the tool console', () => {
  let dir: string

  beforeAll(async () => {
    dir = await makeTmpDir('gencode-console-')
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true })
    writeFileSync(join(dir, 'src', 'main.ts'), 'export {}\n')
    writeFileSync(join(dir, 'src', 'lib', 'util.ts'), 'export const x = 1\n')
    writeFileSync(join(dir, 'README.md'), '# hi\n')
  })

  afterAll(async () => {
    await removeTmpDir(dir)
  })

  it('prints exactly the text the model receives for the same call in an agent turn', async () => {
    const run = await finish(startConsole(['list_directory', 'path=src', 'recursive=true'], dir))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    // The same call through the agent loop, on the same plugin build, relative to the same cwd.
    const pkg = discoverPlugins(root).find((p) => p.name === '@gencode-ai/dsh-tool-list-dir')!
    const host = await bootHost({ cwd: dir, script: [toolTurn({ id: 'c1', name: 'list_directory', args: { path: 'src', recursive: true } }), textTurn('ok')] })
    try {
      await host.ctx.plugin(await import(pathToFileURL(pkg.entry).href), {})
      const [result] = toolResults(await runTurn(host.ctx, host.agent()))
      expect(result!.isError).toBe(false)
      expect(run.stdout).toBe(`${result!.text}\n`)
      expect(run.stdout).toContain('util.ts')
    } finally {
      await host.dispose()
    }
  })

  it('--json adds the canonical value', async () => {
    const run = await finish(startConsole(['list_directory', 'path=.', '--json'], dir))
    expect(run.code).toBe(0)
    const [text, json] = run.stdout.split('--- canonical value ---\n')
    expect(text).toContain('README.md')
    const value = (JSON.parse(json!) as { value: { entries: { name: string }[] } }).value
    expect(value.entries.map((e) => e.name)).toEqual(['src', 'README.md'])
  })

  it('a failed call exits 1 with the tool error; malformed input exits 2 with the syntax error', async () => {
    const failed = await finish(startConsole(['list_directory', 'path=nope'], dir))
    expect(failed.code).toBe(1)
    expect(failed.stdout).toContain('nope')
    const malformed = await finish(startConsole(['list_directory', 'src'], dir))
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toBe('argument "src" is not key=value — write it as name=value, e.g. path=src\n')
    const flag = await finish(startConsole(['--jsn'], dir))
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('unknown option --jsn')
  })

  it('help lists the tools of every loaded plugin', async () => {
    const run = await finish(startConsole(['help'], dir))
    expect(run.code).toBe(0)
    for (const tool of ['list_directory', 'read_file', 'bash_bg', 'kill_shell']) expect(run.stdout).toMatch(new RegExp(`^  ${tool} `, 'm'))
  })

  it('reads calls from stdin: a background shell started in one call is killed by the next', async () => {
    const child = startConsole([], dir)
    const done = finish(child)
    let seen = ''
    const shell = await new Promise<{ id: string, pid: number }>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        seen += d.toString()
        const match = /(bg-[a-z0-9]{6}) \(pid (\d+)/.exec(seen)
        if (match) resolve({ id: match[1]!, pid: Number(match[2]) })
      })
      child.stdin.write('bash_bg command="sleep 300" run_in_background=true\n')
    })
    expect(alive(shell.pid)).toBe(true)
    child.stdin.end(`/tasks\nkill_shell shell_id=${shell.id}\n`)
    const run = await done
    expect(run.code).toBe(0)
    // The human /tasks command (bash-bg's, through the host's command registry) lists it.
    expect(run.stdout).toMatch(new RegExp(`${shell.id}.*sleep 300.*running`))
    expect(run.stdout).toContain(`Stopped ${shell.id}`)
    expect(alive(shell.pid)).toBe(false)
  })

  it('exits 0 at EOF while a multi-process shell (node cluster, 3 workers) is still running, and leaves none of it (5 runs)', async () => {
    // The primary reports once every worker is online; each process's argv carries the run's tag (cluster passes it on).
    writeFileSync(join(dir, 'cluster.cjs'), [
      "const cluster = require('node:cluster')",
      'if (cluster.isPrimary) {',
      '  let online = 0',
      "  cluster.on('online', () => { if (++online === 3) console.log('3 workers up') })",
      '  for (let i = 0; i < 3; i++) cluster.fork()',
      '} else {',
      '  setInterval(() => {}, 1000)',
      '}',
    ].join('\n'))
    const tagged = (tag: string) => readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(tag)
      } catch {
        return false
      }
    })
    for (let run = 0; run < 5; run++) {
      const tag = `gencode-cluster-${process.pid}-${run}`
      const child = startConsole([], dir)
      child.stdin.end(`bash_bg command="node cluster.cjs ${tag}" run_in_background=true wait_for="3 workers up" timeout=20000\n`)
      const result = await finish(child)
      expect(result.stdout).toContain('3 workers up')
      expect(result.stderr).toBe('')
      expect(result.code).toBe(0)
      expect(tagged(tag)).toEqual([])
    }
  }, 120_000)

  it('survives EPIPE (npm start … | head): no crash, exit status 0, background shells stopped', async () => {
    writeFileSync(join(dir, 'big.txt'), Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(60)}`).join('\n'))
    // The first line names the shell; the reads then write far more than a pipe holds after head has gone.
    const input = join(dir, 'calls.txt')
    writeFileSync(input, ['bash_bg command="sleep 300" run_in_background=true', ...Array.from({ length: 6 }, () => 'read_file file_path=big.txt')].join('\n') + '\n')
    const err = join(dir, 'console.err')
    const env: NodeJS.ProcessEnv = { ...process.env, INIT_CWD: dir }
    delete env.DEEPSEEK_API_KEY
    const script = 'node "$0" < "$1" 2> "$2" | head -n 1; echo "status=${PIPESTATUS[0]}"'
    const pipeline = spawn('bash', ['-c', script, start, input, err], { cwd: root, env })
    let out = ''
    pipeline.stdout.on('data', (d: Buffer) => { out += d.toString() })
    await new Promise((resolve) => pipeline.on('close', resolve))
    const [first, status] = out.trimEnd().split('\n')
    expect(first).toMatch(/^Started background shell bg-[a-z0-9]{6} \(pid \d+/)
    expect(readFileSync(err, 'utf8')).toBe('')
    expect(status).toBe('status=0')
    expect(alive(Number(/\(pid (\d+)/.exec(first!)![1]))).toBe(false)
  }, 60_000)

  it('kills the background shells still running when input ends', async () => {
    const child = startConsole([], dir)
    child.stdin.end('bash_bg command="sleep 300" run_in_background=true\n')
    const run = await finish(child)
    expect(run.code).toBe(0)
    const pid = Number(/\(pid (\d+)/.exec(run.stdout)![1])
    expect(alive(pid)).toBe(false)
  })
})
