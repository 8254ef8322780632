// A walk's helper: a worker thread that counts the subtrees a walk hands it, in parallel with the walk (walk.ts).
import { closeSync } from 'node:fs'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from './args.ts'
import { ABORTED, type CountReply, type CountRequest, IN_FLIGHT, LOADED } from './count-protocol.ts'
import type { GitIgnore, Repo } from './gitignore.ts'
import type { LocalSource } from './local-source.ts'
import type { Dir } from './types.ts'
import { type CountHelper, SharedBudget, type Totals } from './walk.ts'

/** The thread's heap: a directory of millions of entries fits; past it the thread ends and the walk says its totals are partial. */
const HEAP_MB = 512

/** One plugin instance's count thread: started by its first recursive listing, loaded in the background, ended on dispose. */
export class CountThread {
  private worker: Worker | undefined
  private failed = false
  private readonly cells = new Int32Array(new SharedArrayBuffer(8))
  private readonly replies: ((reply: CountReply) => void)[] = []

  /** Start the thread if it is not running: the walk that starts it hands it nothing until it has loaded. */
  warm(): void {
    if (this.worker !== undefined || this.failed) return
    let worker: Worker
    try {
      worker = startWorker(import.meta.url, 'count-worker', { workerData: this.cells, resourceLimits: { maxOldGenerationSizeMb: HEAP_MB } })
    } catch {
      this.failed = true
      return
    }
    this.worker = worker
    worker.unref()
    worker.on('message', (reply: CountReply) => {
      this.replies.shift()?.(reply)
      if (this.replies.length === 0) worker.unref()
    })
    const fail = (why: string): void => {
      this.failed = true
      for (const answer of this.replies.splice(0)) answer({ error: why })
    }
    worker.on('error', (error) => { fail(error.message) })
    worker.on('exit', (code) => { fail(`exit code ${code}`) })
  }

  /** Loaded, healthy and counting nothing: read from the shared cells, so a walk that never yields sees it. */
  free(): boolean {
    return !this.failed && Atomics.load(this.cells, LOADED) === 1 && Atomics.load(this.cells, IN_FLIGHT) === 0
  }

  /** Send a request (its descriptors then the thread's); undefined when there is no thread to send it to. */
  request(request: CountRequest): Promise<CountReply> | undefined {
    const worker = this.worker
    if (worker === undefined || this.failed) return undefined
    Atomics.add(this.cells, IN_FLIGHT, 1)
    worker.ref() // a walk waits for the answer: the host must not exit under it
    const reply = new Promise<CountReply>((resolve) => { this.replies.push(resolve) })
    worker.postMessage(request)
    return reply
  }

  close(): void {
    this.failed = true
    void this.worker?.terminate()
    this.worker = undefined
  }
}

/** The helper of one walk on the local disk: hands the thread open descriptors of the subtrees, and the walk's terms. */
export function walkHelper(thread: CountThread, source: LocalSource, request: ListRequest, repo: Repo | undefined, signal: AbortSignal) {
  const cells = new Int32Array(new SharedArrayBuffer(12))
  const onAbort = (): void => { Atomics.store(cells, ABORTED, 1) }
  signal.addEventListener('abort', onAbort, { once: true })
  const args = { depth: request.depth, ignore: request.ignoreGlobs, all: !request.skim }
  const helper: CountHelper = {
    free: () => thread.free(),
    async count(dir: Dir, names: string[], rels: string[], level: number, rules: GitIgnore | undefined): Promise<Totals | undefined> {
      const fds = source.share(dir, names)
      const roots: CountRequest['roots'] = []
      for (const [index, fd] of fds.entries()) {
        if (fd === undefined) continue
        const child = source.child(dir, names[index] as string)
        roots.push({ fd, display: child.display, local: child.local as string, rel: rels[index] as string })
      }
      if (roots.length === 0) return { total: 0, file: 0, directory: 0, symlink: 0, other: 0, ignored: 0, gitignored: 0, partial: false }
      const described = repo === undefined || rules === undefined
        ? undefined
        : { prefix: repo.prefix, root: repo.root, tracked: repo.tracked, rules: rules.describe() }
      // The thread reads through the descriptors and closes none: they are closed here once it has answered (or ended).
      try {
        const reply = await thread.request({ roots, level, args, ...described === undefined ? {} : { repo: described }, cells })
        return reply !== undefined && 'totals' in reply ? reply.totals : undefined
      } finally {
        for (const { fd } of roots) closeSync(fd)
      }
    },
  }
  return { helper, budget: new SharedBudget(cells, 0), done: () => { signal.removeEventListener('abort', onAbort) } }
}
