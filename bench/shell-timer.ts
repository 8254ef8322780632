// A command timed by a long-lived bash, as `time <command>` in a terminal measures it: the bench's own process (a host
// of a few hundred MB) never forks for it, so the baseline carries no spawn cost of the bench (execFileSync from the host
// added 6–13 ms to each `find`) and the calls timed next to it run in a process that did not just fork.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { SelfTimed } from './time.ts'

export interface ShellTimer {
  /** Run the command once (output to /dev/null); its wall time in ms, as the shell measured it. */
  run: () => Promise<SelfTimed>
  close: () => void
}

export function shellTimer(command: readonly string[]): ShellTimer {
  const quoted = command.map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ')
  const loop = `while read -r _; do s=$EPOCHREALTIME; ${quoted} > /dev/null 2>&1; e=$EPOCHREALTIME; echo "$s $e"; done`
  const shell = spawn('bash', ['-c', loop], { stdio: ['pipe', 'pipe', 'inherit'] })
  const waiting: ((line: string) => void)[] = []
  createInterface({ input: shell.stdout }).on('line', (line) => waiting.shift()?.(line))
  return {
    run: async () => {
      const line = await new Promise<string>((resolve) => {
        waiting.push(resolve)
        shell.stdin.write('\n')
      })
      const [start = Number.NaN, end = Number.NaN] = line.split(' ').map(Number)
      return { selfTimedMs: (end - start) * 1000 }
    },
    close: () => shell.stdin.end(),
  }
}
