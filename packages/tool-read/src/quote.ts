/**
 * A value echoed into a message, quoted and cut so a huge argument never floods the result.
 */
export function quoted(value: string, max = 120): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
}
