// The stream of any byte range of a log, from its sidecar (log-writer.ts): the sidecar lists the stderr pieces as
// `<offset> <length>` lines in log order; every other byte is stdout (the cap's marker included).
import { readFileSync } from 'node:fs'
import type { StreamName } from './log-writer.ts'

export type StreamRun = { start: number, end: number, stream: StreamName }

/** The stderr pieces recorded in `sidecar`, merged where adjacent; a torn last line (a crash mid-write) is skipped. */
function stderrRuns(sidecar: string): Array<{ start: number, end: number }> {
  let text: string
  try {
    text = readFileSync(sidecar, 'latin1')
  } catch {
    return []
  }
  const runs: Array<{ start: number, end: number }> = []
  for (const line of text.split('\n')) {
    const match = /^(\d+) (\d+)$/.exec(line)
    if (match === null) continue
    const start = Number(match[1])
    const end = start + Number(match[2])
    const last = runs.at(-1)
    if (last !== undefined && last.end === start) last.end = end
    else runs.push({ start, end })
  }
  return runs
}

/** The log's bytes [from, to) cut into runs of one stream each, in order. */
export function streamRuns(sidecar: string, from: number, to: number): StreamRun[] {
  const runs: StreamRun[] = []
  let at = from
  for (const run of stderrRuns(sidecar)) {
    if (run.end <= at) continue
    if (run.start >= to) break
    if (run.start > at) runs.push({ start: at, end: run.start, stream: 'stdout' })
    runs.push({ start: Math.max(at, run.start), end: Math.min(to, run.end), stream: 'stderr' })
    at = Math.min(to, run.end)
  }
  if (at < to) runs.push({ start: at, end: to, stream: 'stdout' })
  return runs
}
