/** Longest part of an argument echoed back into a message. */
const MAX_ECHO = 120

/**
 * A value echoed into a message, quoted and cut so a huge argument never floods the model; a
 * cut one says how long it was.
 */
export function quoted(value: string): string {
  if (value.length <= MAX_ECHO) return JSON.stringify(value)
  return `${JSON.stringify(`${value.slice(0, MAX_ECHO)}…`)} (${value.length} characters)`
}

/**
 * A shell_id echoed into a message: an id-shaped value as is, as the seed writes
 * `Shell not found: invalid-id`; anything else (blanks, quotes, control characters, over 120
 * characters) quoted and cut.
 */
export function shownId(id: string): string {
  return /^[\w.:-]{1,120}$/.test(id) ? id : quoted(id)
}
