// Code that waits only when a source makes it: a generator yields the promises it needs settled, values go on at once.

/** A value now (a local read), or later (a provider's, or a read that yields to the event loop first). */
export type Maybe<T> = T | Promise<T>

/** Steps that yield what must settle before they go on, and receive its value (or its error, thrown at the yield). */
export type Steps<T> = Generator<Promise<unknown>, T, unknown>

export const isPromise = <T>(value: Maybe<T>): value is Promise<T> => value instanceof Promise

/** `then` for a Maybe (named apart: a module exporting `then` is a thenable to every `import()`): applied at once to a value now. */
export const andThen = <T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> => isPromise(value) ? value.then(next) : next(value)

/** Run steps to their end: each promise yielded is awaited and its value (or error) handed back; nothing else waits. */
export async function drive<T>(steps: Steps<T>): Promise<T> {
  let step = steps.next()
  while (step.done !== true) {
    let value: unknown
    try {
      value = await step.value
    } catch (error) {
      step = steps.throw(error)
      continue
    }
    step = steps.next(value)
  }
  return step.value
}
