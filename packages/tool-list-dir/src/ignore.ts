/**
 * Basename globs where only `*` and `?` are wildcards and every other character is literal
 * (`[`, `{`, `!` match themselves) — the meaning qwen-code's list_directory gives `ignore`.
 */
export function ignoreMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false
  const sources = patterns.map((pattern) => Array.from(pattern, (char) => {
    if (char === '*') return '.*'
    if (char === '?') return '.'
    return char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
  }).join(''))
  const regex = new RegExp(`^(?:${sources.join('|')})$`, 'su')
  return (name) => regex.test(name)
}
