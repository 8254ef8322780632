import { argumentError, MAX_GLOB_LENGTH } from './errors.ts'
import { quoted } from './quote.ts'

/**
 * Basename globs where only `*` and `?` are wildcards and every other character is literal
 * (`[`, `{`, `!` match themselves) — the meaning qwen-code's list_directory gives `ignore`.
 */
export function ignoreMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false
  const regexes = patterns.map((pattern, index) => {
    if (pattern.length > MAX_GLOB_LENGTH) {
      throw argumentError(`ignore[${index}] is ${pattern.length} characters; a basename glob has at most ${MAX_GLOB_LENGTH} — shorten it, e.g. "*.log"`)
    }
    const source = Array.from(pattern, (char) => {
      if (char === '*') return '.*'
      if (char === '?') return '.'
      return char.replace(/[.+^${}()|[\]\\]/g, '\\$&')
    }).join('')
    try {
      return new RegExp(`^${source}$`, 'su')
    } catch {
      throw argumentError(`ignore[${index}] ${quoted(pattern)} cannot be used as a glob — use a basename with * and ? only, e.g. "*.log"`)
    }
  })
  return (name) => regexes.some((regex) => regex.test(name))
}
