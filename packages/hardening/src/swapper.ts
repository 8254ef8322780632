// A concurrent swapper process: exchanges two paths (renameat2 RENAME_EXCHANGE) in a tight loop until stopped.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

const C_SOURCE = `#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static volatile sig_atomic_t stop = 0;
static void on_term(int s) { (void)s; stop = 1; }
int main(int argc, char **argv) {
  if (argc != 3) return 2;
  signal(SIGTERM, on_term);
  long swaps = 0;
  printf("ready\\n");
  fflush(stdout);
  while (!stop) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], 2 /* RENAME_EXCHANGE */) != 0) { perror("renameat2"); return 1; }
    swaps++;
  }
  printf("%ld\\n", swaps);
  return 0;
}
`

// The same loop through Python's ctypes, when no C compiler is installed.
const PY_SOURCE = `import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
a, b = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
swaps = 0
print('ready', flush=True)
while not stop:
    if libc.renameat2(-100, a, -100, b, 2) != 0:
        sys.exit('renameat2: ' + os.strerror(ctypes.get_errno()))
    swaps += 1
print(swaps, flush=True)
`

/** The swapper's command line, built once into `dir`: a compiled C loop, else Python. */
export async function buildSwapper(dir: string): Promise<string[]> {
  const hasCc = (() => {
    try {
      execFileSync('cc', ['--version'], { stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })()
  if (hasCc) {
    await writeFile(join(dir, 'swap.c'), C_SOURCE)
    execFileSync('cc', ['-O2', '-o', join(dir, 'swap'), join(dir, 'swap.c')])
    if (existsSync(join(dir, 'swap'))) return [join(dir, 'swap')]
  }
  await writeFile(join(dir, 'swap.py'), PY_SOURCE)
  return ['python3', join(dir, 'swap.py')]
}

export interface Swapper {
  /** Stop the loop; resolves to the number of exchanges it made. */
  stop(): Promise<number>
}

/** Start exchanging `a` and `b` in another process; resolves once the loop runs. */
export async function startSwapper(command: string[], a: string, b: string): Promise<Swapper> {
  const [program, ...args] = command
  const child: ChildProcess = spawn(program ?? 'false', [...args, a, b], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout?.on('data', (data: Buffer) => { out += String(data) })
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', () => { if (out.includes('ready')) resolve() })
    child.once('exit', (code) => reject(new Error(`swapper exited early (${code}): ${out}`)))
  })
  return {
    async stop() {
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      const code = await exited
      if (code !== 0) throw new Error(`swapper failed (${code}): ${out}`)
      return Number(out.trim().split('\n').at(-1))
    },
  }
}
