import { performance } from 'node:perf_hooks'

/** What a timed function returns when it measured itself (a command timed by its shell: see shell-timer.ts). */
export interface SelfTimed { selfTimedMs: number }

const elapsed = (start: number, result: unknown): number =>
  typeof (result as SelfTimed | undefined)?.selfTimedMs === 'number' ? (result as SelfTimed).selfTimedMs : performance.now() - start

/** The median of `runs` timed calls of `fn` after one warm-up, printed and returned (ms). */
export async function time(label: string, runs: number, fn: () => unknown): Promise<number> {
  await fn()
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    samples.push(elapsed(start, await fn()))
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  console.log(`${label.padEnd(52)} ${median.toFixed(1).padStart(9)} ms (median of ${runs})`)
  return median
}

/** Medians of `runs` rounds calling each function in turn (after one warm-up each), printed and returned (ms). */
export async function alternate(runs: number, fns: [string, () => unknown][]): Promise<number[]> {
  for (const [, fn] of fns) await fn()
  const samples = fns.map((): number[] => [])
  for (let i = 0; i < runs; i++) {
    for (const [index, [, fn]] of fns.entries()) {
      const start = performance.now()
      samples[index]?.push(elapsed(start, await fn()))
    }
  }
  return fns.map(([label], index) => {
    const sorted = (samples[index] ?? []).sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
    console.log(`${label.padEnd(52)} ${median.toFixed(1).padStart(9)} ms (median of ${runs}, alternated)`)
    return median
  })
}
