// A matching thread (line-matcher.ts): tests each batch of lines against one pattern, answering each batch in order.
import { parentPort, workerData } from 'node:worker_threads'
import { RE2JS } from 're2js'
import type { MatchAnswer, MatchBatch, MatchSetup } from './match-protocol.ts'

if (parentPort === null) throw new Error('match-worker.ts runs as a worker thread')
const port = parentPort
const setup = workerData as MatchSetup
const pattern = RE2JS.compile(setup.source)

port.on('message', (batch: MatchBatch) => {
  const matched: number[] = []
  for (const [index, line] of batch.lines.entries()) {
    if (!pattern.test(line)) continue
    matched.push(index)
    if (!setup.every) break
  }
  port.postMessage({ matched } satisfies MatchAnswer)
})
