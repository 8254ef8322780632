import { performance } from 'node:perf_hooks'

/** The median of `runs` timed calls of `fn` after one warm-up, printed and returned (ms). */
export async function time(label: string, runs: number, fn: () => Promise<unknown> | unknown): Promise<number> {
  await fn()
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await fn()
    samples.push(performance.now() - start)
  }
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  console.log(`${label.padEnd(52)} ${median.toFixed(1).padStart(9)} ms (median of ${runs})`)
  return median
}
