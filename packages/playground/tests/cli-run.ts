/** A dsh CLI run as the CLI specs collect it: its exit and both streams, SIGKILLed past the run limit (only a hang hits it). */
import type { spawn } from 'node:child_process'

const RUN_LIMIT_MS = 120_000

export interface Run { code: number | null, signal: string | null, stdout: string, stderr: string }

export function collect(child: ReturnType<typeof spawn>): Promise<Run> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS)
  return new Promise((resolve) => child.on('exit', (code, signal) => {
    clearTimeout(timer)
    resolve({ code, signal, stdout, stderr })
  }))
}
