/** Quote an argument echoed into a message, cut so a huge one never floods the result. */
export function quoted(value: string, max = 120): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
}
