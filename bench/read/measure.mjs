// Shared by the read benches: each function in turn, `runs` times (alternating, so load from other
// processes hits all alike), giving median wall times and the peak RSS growth over each one's runs.

export const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]

export async function measure(fns, runs) {
  const times = fns.map(() => [])
  const peaks = fns.map(() => 0)
  globalThis.gc?.()
  const rss0 = process.memoryUsage.rss()
  let current = -1
  const sample = () => { if (current >= 0) peaks[current] = Math.max(peaks[current], process.memoryUsage.rss() - rss0) }
  const sampler = setInterval(sample, 1)
  for (let i = 0; i < runs; i++) {
    for (const [n, fn] of fns.entries()) {
      current = n
      const start = performance.now()
      await fn()
      times[n].push(performance.now() - start)
      sample()
      current = -1
    }
  }
  clearInterval(sampler)
  return fns.map((_, n) => ({ ms: median(times[n]), rssMB: peaks[n] / 2 ** 20 }))
}
