/** `npm run test:stress` sets STRESS=1: the full counts. CI runs the bounded form. */
export const STRESS = process.env.STRESS === '1'

/** The number of generated cases: `full` under STRESS, `bounded` otherwise. */
export function runs(full: number, bounded: number): number {
  return STRESS ? full : bounded
}

/** Settle within `ms` or fail: a hang is a finding, not a slow test. */
export async function withinMs<T>(ms: number, label: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hang: ${label} did not settle in ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** A per-test timeout for the generated runs: generous under STRESS (10,000 cases, 10 GiB). A hang still fails through withinMs. */
export const LONG_TEST_MS = STRESS ? 1_800_000 : 180_000
