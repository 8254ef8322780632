// How late the event loop ran while some work went on: what a host that "never holds its thread" must keep small.

/** The event loop's worst lateness while `work` runs, sampled by a 10 ms timer. */
export async function loopLateness<T>(work: Promise<T>): Promise<{ result: T, worstMs: number }> {
  let worstMs = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    worstMs = Math.max(worstMs, now - last - 10)
    last = now
  }, 10)
  try {
    return { result: await work, worstMs }
  } finally {
    clearInterval(timer)
  }
}
