import picomatch from 'picomatch'
import { argumentError, MAX_GLOB_LENGTH } from './errors.ts'
import { quoted } from './quote.ts'

/**
 * The `pattern` filter: a picomatch glob on the path relative to the listed directory. A
 * pattern without `/` matches the basename at any depth. Hidden entries match like any other.
 */
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
