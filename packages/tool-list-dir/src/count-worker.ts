// The count thread (count-thread.ts): counts the subtrees a walk hands it, each read through the descriptor it was lent.
import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads'
import { parseArgs } from './args.ts'
import { countClaimed } from './claims.ts'
import { ABORTED, type CountReply, type CountRequest, FIELDS, IN_FLIGHT, LOADED, WALKS, type Wake } from './count-protocol.ts'
import { UNKNOWN, trackedPaths } from './filters/git-index.ts'
import { GitIgnore, type Repo } from './filters/gitignore.ts'
import { SharedBudget, type Totals } from './walk.ts'

if (parentPort === null) throw new Error('count-worker.ts runs as a worker thread')
const port: MessagePort = parentPort
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
  const abort = new AbortController()
  const listing = parseArgs({ path: '.', recursive: true, depth: request.args.depth, ignore: request.args.ignore, all: request.args.all }, 1)
  let repo: Repo | undefined
  let rules: GitIgnore | undefined
  if (request.repo !== undefined) {
    const { root, tracked: source } = request.repo
    const tracked = source === 'unknown' || root === undefined ? UNKNOWN : await trackedPaths(root, abort.signal)
    rules = GitIgnore.from(request.repo.rules, tracked)
    repo = { rules, prefix: request.repo.prefix, tracked: source, root }
  }
  const aborted = (): boolean => Atomics.load(request.cells, ABORTED) === 1
  const totals = await countClaimed({
    roots: request.roots, claims: request.claims, counting: { ...listing, cap: 0 }, repo, rules, level: request.level,
    signal: abort.signal, budget: () => new PolledBudget(request.cells, abort), stop: aborted,
  })
  if (aborted()) throw new Error('aborted')
  return totals
}

/** The answer in its cells (readTotals reads it): the totals, then the state that says they are there. */
function writeTotals(cells: Int32Array, totals: Totals | undefined): void {
  if (totals !== undefined) {
    FIELDS.forEach((field, index) => { cells[index + 1] = totals[field] })
    cells[FIELDS.length + 1] = totals.partial ? 1 : 0
  }
  Atomics.store(cells, 0, totals === undefined ? 2 : 1)
}

/** The longest the thread polls for one run of walks: past it, it sleeps until a message wakes it. */
const MAX_POLL_MS = 1000

async function answer(request: CountRequest): Promise<void> {
  const reply = await count(request).then(
    (totals): CountReply => ({ totals }),
    (error: unknown): CountReply => ({ error: error instanceof Error ? error.message : String(error) }),
  )
  writeTotals(request.answer, 'totals' in reply ? reply.totals : undefined)
  Atomics.sub(state, IN_FLIGHT, 1)
  port.postMessage(reply)
}

let polling = false

/** While walks run, take their requests as they come (a sleeping thread took milliseconds to be scheduled again). */
async function poll(): Promise<void> {
  if (polling) return
  polling = true
  try {
    const until = Date.now() + MAX_POLL_MS
    while (Atomics.load(state, WALKS) > 0 && Date.now() < until) {
      const received: { message: CountRequest | Wake } | undefined = receiveMessageOnPort(port)
      if (received !== undefined && !('wake' in received.message)) await answer(received.message)
    }
  } finally {
    polling = false
  }
}

port.on('message', (message: CountRequest | Wake) => {
  void ('wake' in message ? poll() : answer(message))
})
Atomics.store(state, LOADED, 1)
