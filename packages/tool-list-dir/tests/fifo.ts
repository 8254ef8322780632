import { execFileSync } from 'node:child_process'

/** Node has no mkfifo; the coreutils one makes a real FIFO. */
export async function mkfifo(path: string): Promise<void> {
  execFileSync('mkfifo', [path])
}
