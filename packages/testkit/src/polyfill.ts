// The rc.8 agent loop calls Promise.withResolvers, which Node 20 lacks.
function withResolvers<T>(): { promise: Promise<T>, resolve: (value: T | PromiseLike<T>) => void, reject: (reason?: unknown) => void } {
  let resolve!: (value: T | PromiseLike<T>) => void
  let reject!: (reason?: unknown) => void
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  return { promise, resolve, reject }
}

const P = Promise as unknown as { withResolvers?: unknown }
if (typeof P.withResolvers !== 'function') P.withResolvers = withResolvers
export {}
