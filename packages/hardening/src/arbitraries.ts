// fast-check arbitraries for hostile tool arguments: nasty strings, paths and globs.
import fc from 'fast-check'

/** Strings that break naive code: empty, huge, unicode, control characters, NUL, path tricks. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', '.', '..', '/', '//', '~', '-', '\0', 'a\0b', '\n', '\t', '*', '?', '[', '{', '!', '**', '../../../../etc', '/etc/passwd', '/proc/self/fd/0', 'C:\\Windows', '%00', '\u202e', '😀', 'é', '文件'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 1, max: 20 }).map((n) => '../'.repeat(n)),
  fc.integer({ min: 1000, max: 70_000 }).map((n) => 'x'.repeat(n)),
)

/** Numbers of every awkward kind. */
export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 0.5, -0.5, 1e300, -1e300, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 31, 2 ** 53 + 2),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
)

/** Any JSON value a model could send. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  nastyNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(nastyString, nastyNumber, fc.constant(null)), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(nastyString, nastyNumber), { maxKeys: 3 }),
)

/**
 * An argument object for a tool: each known key absent, well-typed but nasty, or of any type;
 * sometimes extra keys; sometimes not an object at all.
 */
export function argsFor(keys: Record<string, fc.Arbitrary<unknown>>, required: string[] = []): fc.Arbitrary<unknown> {
  const record = fc.record(
    Object.fromEntries(Object.entries(keys).map(([key, good]) => [key, sometimes(good, anyJson, 15)])),
    { requiredKeys: required },
  )
  const extraKeys = fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 2 })
  return fc.oneof(
    { weight: 12, arbitrary: record },
    { weight: 2, arbitrary: fc.tuple(record, extraKeys).map(([a, b]) => ({ ...b, ...(a as object) })) },
    { weight: 1, arbitrary: anyJson },
  )
}

/** `good` most of the time (`weight` to 1), otherwise `nasty`. */
export function sometimes<T>(good: fc.Arbitrary<T>, nasty: fc.Arbitrary<unknown>, weight = 4): fc.Arbitrary<unknown> {
  return fc.oneof({ weight, arbitrary: good }, { weight: 1, arbitrary: nasty })
}
