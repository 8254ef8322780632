/**
 * wait_for's and watch's pattern: a JavaScript regular expression, checked and translated here for a linear-time engine (RE2)
 * that runs it on a matching thread (line-matcher.ts), so no pattern can stall the host.
 */
import { RE2JS } from 're2js'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { quoted } from '@gencode-ai/dsh-tool-common'

/** Longest wait_for pattern accepted (characters): matching cost grows with pattern × line length. */
const MAX_PATTERN = 1000

/** `source`: the pattern in RE2 syntax, known to compile. */
export interface LinePattern {
  readonly source: string
}

/** The argument a pattern came in. */
export type PatternArg = 'wait_for' | 'watch'

const refuse = (arg: PatternArg, pattern: string, why: string, instead: string) => new HarnessError(
  `invalid ${arg}: ${quoted(pattern)} ${why} — ${instead}`, 'INVALID_ARGS',
)

/**
 * The first construct a linear-time engine cannot run: lookaround and backreferences need backtracking.
 * Walks the pattern once, skipping escapes and character classes.
 */
function backtrackingConstruct(pattern: string): string | undefined {
  const named = /\(\?<[A-Za-z_$]/.test(pattern)
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === '\\') {
      const next = pattern[i + 1] ?? ''
      if (!inClass && /[1-9]/.test(next)) return `a backreference (\\${next})`
      if (!inClass && next === 'k' && named && pattern[i + 2] === '<') return 'a named backreference (\\k<…>)'
      i++
    } else if (inClass) {
      if (char === ']') inClass = false
    } else if (char === '[') {
      inClass = true
      if (pattern[i + 1] === ']') i++
    } else if (char === '(' && pattern[i + 1] === '?') {
      const kind = pattern.slice(i + 2, i + 4)
      if (kind.startsWith('=') || kind.startsWith('!')) return `a lookahead (?${kind[0]}…)`
      if (kind === '<=' || kind === '<!') return `a lookbehind (?${kind}…)`
    }
  }
  return undefined
}

/** Compiles `pattern` or throws an error naming `arg` and what to write instead. */
export function compileLinePattern(pattern: string, arg: PatternArg = 'wait_for'): LinePattern {
  if (pattern.length > MAX_PATTERN) {
    throw refuse(arg, pattern, `is ${pattern.length} characters, over the ${MAX_PATTERN}-character limit`, 'match a short, distinctive part of the ready line')
  }
  try {
    RegExp(pattern)
  } catch (error) {
    throw refuse(arg, pattern, `is not a JavaScript regular expression (${(error as Error).message})`, 'escape special characters with \\, e.g. "listening on port \\d+"')
  }
  const construct = backtrackingConstruct(pattern)
  if (construct !== undefined) {
    throw refuse(arg, pattern, `uses ${construct}, which the linear-time matcher cannot run`, 'match the line without it, e.g. "ready on port \\d+" instead of "ready(?= on)"')
  }
  try {
    const source = RE2JS.translateRegExp(pattern)
    RE2JS.compile(source)
    return { source }
  } catch (error) {
    throw refuse(arg, pattern, `cannot run in the linear-time matcher (${(error as Error).message})`, 'use plain groups, classes and quantifiers')
  }
}
