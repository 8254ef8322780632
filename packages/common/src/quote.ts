// Quoting a value echoed into a message: JSON-quoted, and cut so a huge argument never floods the model.

/** Longest part of a value echoed back (code points). */
const MAX_ECHO = 120

/** `value` JSON-quoted; past 120 code points, cut with `…` and followed by its full length, as `echo` does. */
export function quoted(value: string): string {
  const chars = Array.from(value)
  if (chars.length <= MAX_ECHO) return JSON.stringify(value)
  return `${JSON.stringify(`${chars.slice(0, MAX_ECHO).join('')}…`)} (${chars.length} characters)`
}
