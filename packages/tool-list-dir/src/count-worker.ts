// The count thread (count-thread.ts): counts the subtrees a walk hands it, each read through the descriptor it was lent.
import { parentPort, workerData } from 'node:worker_threads'
import { parseArgs } from './args.ts'
import { ABORTED, type CountReply, type CountRequest, IN_FLIGHT, LOADED } from './count-protocol.ts'
import { UNKNOWN, trackedPaths } from './git-index.ts'
import { GitIgnore, type Repo } from './gitignore.ts'
import { LocalSource } from './local-source.ts'
import { SharedBudget, type Totals, walk } from './walk.ts'

const port = parentPort
if (port === null) throw new Error('count-worker.ts runs as a worker thread')
const state = workerData as Int32Array

/** The walk's budget, which also ends this thread's part once the walk is aborted (its cell is polled per directory). */
class PolledBudget extends SharedBudget {
  constructor(private readonly walkCells: Int32Array, private readonly abort: AbortController) {
    super(walkCells, 1)
  }

  override spent(total: number): number {
    if (Atomics.load(this.walkCells, ABORTED) === 1) this.abort.abort()
    return super.spent(total)
  }
}

async function count(request: CountRequest): Promise<Totals> {
  const totals: Totals = { total: 0, file: 0, directory: 0, symlink: 0, other: 0, ignored: 0, gitignored: 0, partial: false }
  const abort = new AbortController()
  const listing = parseArgs({ path: '.', recursive: true, depth: request.args.depth, ignore: request.args.ignore, all: request.args.all }, 1)
  // Everything is counted (a window of none): what could be shown is the walk's, in its own thread.
  const counting = { ...listing, cap: 0 }
  let repo: Repo | undefined
  let rules: GitIgnore | undefined
  if (request.repo !== undefined) {
    const { root, tracked: source } = request.repo
    const tracked = source === 'unknown' || root === undefined ? UNKNOWN : await trackedPaths(root, abort.signal)
    rules = GitIgnore.from(request.repo.rules, tracked)
    repo = { rules, prefix: request.repo.prefix, tracked: source, root }
  }
  for (const next of request.roots) {
    if (Atomics.load(request.cells, ABORTED) === 1) break
    const source = new LocalSource()
    const dir = { display: next.display, local: next.local }
    source.adopt(dir, next.fd)
    const budget = new PolledBudget(request.cells, abort)
    try {
      const result = await walk(source, dir, counting, repo, abort.signal, { budget, start: { prefix: next.rel, level: request.level, rules } })
      totals.total += result.total
      totals.file += result.counts.file
      totals.directory += result.counts.directory
      totals.symlink += result.counts.symlink
      totals.other += result.counts.other
      totals.ignored += result.ignored
      totals.gitignored += result.gitignored
      totals.partial ||= result.partial
    } catch (error) {
      if (abort.signal.aborted) throw error
      // A subtree that cannot be read is an entry that cannot be entered, as in the walk itself.
    }
  }
  if (Atomics.load(request.cells, ABORTED) === 1) throw new Error('aborted')
  return totals
}

port.on('message', (request: CountRequest) => {
  void count(request).then(
    (totals): CountReply => ({ totals }),
    (error: unknown): CountReply => ({ error: error instanceof Error ? error.message : String(error) }),
  ).then((reply) => {
    Atomics.sub(state, IN_FLIGHT, 1)
    port.postMessage(reply)
  })
})
Atomics.store(state, LOADED, 1)
