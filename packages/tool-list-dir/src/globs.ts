import picomatch from 'picomatch'
import { argumentError } from './errors.ts'
import { quoted } from './quote.ts'

/** Longest glob accepted in `pattern` or `ignore`: far past any real one, short of regex limits. */
const MAX_GLOB_LENGTH = 1024

/** `ignore`: basename globs where only `*` and `?` are wildcards (qwen-code's meaning; `[`, `{`, `!` are literal). */
export function ignoreMatcher(patterns: readonly string[]): (name: string) => boolean {
  const regexes = patterns.map((pattern, index) => {
    if (pattern.length > MAX_GLOB_LENGTH) {
      throw argumentError(`ignore[${index}] is ${pattern.length} characters; a basename glob has at most ${MAX_GLOB_LENGTH} — shorten it, e.g. "*.log"`)
    }
    const source = Array.from(pattern, (char) => char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
    try {
      return new RegExp(`^${source.join('')}$`, 'su')
    } catch {
      throw argumentError(`ignore[${index}] ${quoted(pattern)} cannot be used as a glob — use a basename with * and ? only, e.g. "*.log"`)
    }
  })
  return (name) => regexes.some((regex) => regex.test(name))
}

/** `pattern`: a picomatch glob on the relative path; one without `/` matches basenames at any depth, hidden ones too. */
export function patternMatcher(pattern: string): (relativePath: string) => boolean {
  if (pattern.length > MAX_GLOB_LENGTH) {
    throw argumentError(`pattern is ${pattern.length} characters; a glob has at most ${MAX_GLOB_LENGTH} — try e.g. "*.ts"`)
  }
  let regex: RegExp
  try {
    regex = picomatch.makeRe(pattern, { dot: true })
  } catch (error) {
    throw argumentError(`pattern ${quoted(pattern)} is not a valid glob — try e.g. "*.ts" or "src/**/*.json"`, { cause: error })
  }
  // picomatch compiles a pattern it cannot parse (an unclosed brace or extglob) to a never-match.
  if (regex.source === '$^') {
    throw argumentError(`pattern ${quoted(pattern)} is not a valid glob (unbalanced brace or parenthesis) — try e.g. "*.ts" or "src/**/*.json"`)
  }
  const matchBase = !pattern.includes('/')
  return (relativePath) => regex.test(matchBase ? relativePath.slice(relativePath.lastIndexOf('/') + 1) : relativePath)
}
