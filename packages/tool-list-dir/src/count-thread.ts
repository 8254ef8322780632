// A walk's helper: a worker thread that counts the subtrees a walk hands it, in parallel with the walk (walk.ts).
import { closeSync } from 'node:fs'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from './args.ts'
import { availableParallelism } from 'node:os'
import { ABORTED, ANSWER_CELLS, type CountReply, type CountRequest, IN_FLIGHT, LOADED, readTotals, WALKS, type Wake } from './count-protocol.ts'
import type { GitIgnore, Repo } from './filters/gitignore.ts'
import type { LocalSource } from './local-source.ts'
import type { Dir } from './types.ts'
import { countClaimed, type Root } from './claims.ts'
import { addTotals, type CountHelper, type Handed, SharedBudget, type Totals } from './walk.ts'

/**
 * How long a walk whose own part is done polls for the thread's answer before it sleeps until the message comes: a
 * sleeping thread took milliseconds to be scheduled again, while the thread is rarely more than one subtree from done.
 */
const POLL_ANSWER_MS = 50

/** The answer once written, polled for up to POLL_ANSWER_MS; 'pending' past that. */
function awaitAnswer(answer: Int32Array): ReturnType<typeof readTotals> {
  const until = performance.now() + POLL_ANSWER_MS
  let read = readTotals(answer)
  while (read === 'pending' && performance.now() < until) read = readTotals(answer)
  return read
}

/** The thread's heap: a directory of millions of entries fits; past it the thread ends and the walk says its totals are partial. */
const HEAP_MB = 512

/** A thread unused this long is ended (its memory, about 25 MB, given back); the next deep listing starts it again. */
const IDLE_MS = 5 * 60_000

/**
 * One plugin instance's count thread: started after its first recursive listing (loaded in the background, it serves the
 * next ones), ended when idle and on dispose. Not on a machine of one core, where it could only take turns with the walk.
 */
export class CountThread {
  private worker: Worker | undefined
  private failed = availableParallelism() < 2
  private readonly cells = new Int32Array(new SharedArrayBuffer(12))
  private readonly replies: ((reply: CountReply) => void)[] = []
  private idle: NodeJS.Timeout | undefined

  constructor(private readonly idleMs = IDLE_MS) {}

  /** Start the thread if it is not running (a walk hands it nothing until it has loaded); it is ended after `idleMs` unused. */
  warm(): void {
    if (this.failed) return
    clearTimeout(this.idle)
    this.idle = setTimeout(() => { this.retire() }, this.idleMs).unref()
    if (this.worker !== undefined) return
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
    // Only the running thread's end is a failure (a retired one's is not).
    const fail = (why: string): void => {
      if (this.worker !== worker) return
      this.failed = true
      this.worker = undefined
      for (const answer of this.replies.splice(0)) answer({ error: why })
    }
    worker.on('error', (error) => { fail(error.message) })
    worker.on('exit', (code) => { fail(`exit code ${code}`) })
  }

  /** End an idle thread (loaded, none of its walks running, nothing asked of it); one still loading is given its time again. */
  private retire(): void {
    const worker = this.worker
    if (worker === undefined || Atomics.load(this.cells, WALKS) > 0 || Atomics.load(this.cells, IN_FLIGHT) > 0) return
    if (Atomics.load(this.cells, LOADED) !== 1) {
      this.idle = setTimeout(() => { this.retire() }, this.idleMs).unref()
      return
    }
    this.worker = undefined
    Atomics.store(this.cells, LOADED, 0)
    void worker.terminate()
  }

  /**
   * A walk that may hand subtrees on is starting: the thread, asleep since its last walk, is woken now (a sleeping
   * thread took milliseconds to be scheduled again) and polls for requests until `end`.
   */
  begin(): boolean {
    if (this.worker === undefined || this.failed || Atomics.load(this.cells, LOADED) !== 1) return false
    if (Atomics.add(this.cells, WALKS, 1) === 0) this.worker.postMessage({ wake: true } satisfies Wake, [])
    return true
  }

  /** A walk `begin` counted has ended. */
  end(): void {
    Atomics.sub(this.cells, WALKS, 1)
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
    worker.postMessage(request, [])
    return reply
  }

  /** End the thread for good; what it was asked is answered as failed once it has stopped (it reads no descriptor after). */
  close(): void {
    clearTimeout(this.idle)
    this.failed = true
    void this.worker?.terminate()
  }
}

/**
 * The helper of one walk on the local disk: lends the thread open descriptors of the subtrees, with the walk's terms;
 * the walk counts itself whatever the thread has not claimed once its own part is done (so a thread scheduled late
 * costs the walk at most the subtree it is counting). The descriptors are closed once neither thread can use them.
 */
export function walkHelper(thread: CountThread, source: LocalSource, request: ListRequest, repo: Repo | undefined, signal: AbortSignal) {
  const cells = new Int32Array(new SharedArrayBuffer(12))
  const onAbort = (): void => { Atomics.store(cells, ABORTED, 1) }
  signal.addEventListener('abort', onAbort, { once: true })
  const args = { depth: request.depth, ignore: request.ignoreGlobs, all: !request.skim }
  const counting = { ...request, cap: 0 }
  const helper: CountHelper = {
    free: () => thread.free(),
    count(dir: Dir, names: string[], rels: string[], level: number, rules: GitIgnore | undefined): Handed {
      const roots: Root[] = []
      for (const [index, fd] of source.share(dir, names).entries()) {
        if (fd === undefined) continue
        const child = source.child(dir, names[index] as string)
        roots.push({ fd, display: child.display, local: child.local as string, rel: rels[index] as string })
      }
      const claims = new Int32Array(new SharedArrayBuffer(4))
      const answer = new Int32Array(new SharedArrayBuffer(4 * ANSWER_CELLS))
      const described = repo === undefined || rules === undefined
        ? undefined
        : { prefix: repo.prefix, root: repo.root, tracked: repo.tracked, rules: rules.describe() }
      const sent = roots.length === 0
        ? undefined
        : thread.request({ roots, claims, level, args, ...described === undefined ? {} : { repo: described }, cells, answer })
      const close = (): void => {
        for (const { fd } of roots) closeSync(fd)
      }
      const budget = (): SharedBudget => new SharedBudget(cells, 0)
      const settle = async (): Promise<Totals> => {
        // The rest here, then the thread's answer (it claims no more once it has answered, or ended); then the descriptors close.
        try {
          const here = await countClaimed({ roots, claims, counting, repo, rules, level, signal, budget, stop: () => signal.aborted })
          if (sent === undefined) return here
          const written = awaitAnswer(answer)
          const theirs = written === 'pending' ? await sent.then((reply) => 'totals' in reply ? reply.totals : undefined) : written
          if (theirs !== undefined) return addTotals(here, theirs)
          // The thread failed: what it had claimed is not counted (the totals are then lower bounds).
          const lost = Math.min(Atomics.load(claims, 0), roots.length) - here.claimed
          return lost > 0 ? { ...here, partial: true } : here
        } finally {
          await sent
          close()
        }
      }
      return { settle, dropped: () => { void (sent ?? Promise.resolve()).then(close) } }
    },
  }
  return { helper, budget: new SharedBudget(cells, 0), done: () => { signal.removeEventListener('abort', onAbort) } }
}
