/** One parsed console call: the tool name and its JSON arguments. */
export interface ParsedCall {
  tool: string
  args: Record<string, unknown>
}

/** A malformed call line or argv; the message says what would work. */
export class CallSyntaxError extends Error {
  override name = 'CallSyntaxError'
}

/** One `key=value` token; `quoted` means the value was written as a quoted string. */
interface Token {
  text: string
  quoted: boolean
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/

/**
 * Turn the text after `key=` into a JSON value: true/false/null, numbers, and JSON arrays,
 * objects or strings are typed; anything else is a plain string. `stringKeys` names the
 * parameters the tool declares as strings, which keep their raw text (so `path=123` is a path).
 */
function valueOf(key: string, raw: string, quoted: boolean, stringKeys: ReadonlySet<string>): unknown {
  if (quoted || stringKeys.has(key)) return raw
  if (raw === 'true') return true
  if (raw === 'false') return false
  if (raw === 'null') return null
  if (NUMBER.test(raw)) return Number(raw)
  if (raw.startsWith('[') || raw.startsWith('{') || raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as unknown
    } catch {
      throw new CallSyntaxError(`argument ${key} is not valid JSON: ${raw} — write arrays as ${key}='["a","b"]' (quote the value for the shell)`)
    }
  }
  return raw
}

function parseTokens(tool: string, tokens: readonly Token[], stringKeys: ReadonlySet<string>): ParsedCall {
  const args: Record<string, unknown> = {}
  for (const token of tokens) {
    const eq = token.text.indexOf('=')
    if (eq <= 0) {
      throw new CallSyntaxError(`argument ${JSON.stringify(token.text)} is not key=value — write it as name=value, e.g. path=src`)
    }
    const key = token.text.slice(0, eq)
    if (!KEY.test(key)) throw new CallSyntaxError(`argument name ${JSON.stringify(key)} is not a parameter name — use letters, digits and _ (e.g. file_path=README.md)`)
    if (Object.hasOwn(args, key)) throw new CallSyntaxError(`argument ${key} is given twice — give each argument once`)
    args[key] = valueOf(key, token.text.slice(eq + 1), token.quoted, stringKeys)
  }
  return { tool, args }
}

function checkTool(tool: string | undefined): string {
  if (tool === undefined || tool === '') throw new CallSyntaxError('no tool named — write a call as <tool> key=value ..., or help to list the tools')
  if (tool.includes('=')) throw new CallSyntaxError(`the call starts with ${JSON.stringify(tool)}, not a tool name — write <tool> key=value ..., e.g. list_directory path=.`)
  return tool
}

/** Parse a call given as process arguments (the shell already removed quotes). */
export function parseArgv(argv: readonly string[], stringKeys: (tool: string) => ReadonlySet<string> = () => new Set()): ParsedCall {
  const tool = checkTool(argv[0])
  return parseTokens(tool, argv.slice(1).map((text) => ({ text, quoted: false })), stringKeys(tool))
}

/**
 * Split one console line into tokens: whitespace separates; a value wrapped in '…' or "…"
 * is a literal string (backslash escapes inside "…"); a value starting with [ or { runs to
 * its matching bracket, so JSON with spaces needs no quoting.
 */
export function tokenizeLine(line: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < line.length) {
    while (i < line.length && /\s/.test(line.charAt(i))) i++
    if (i >= line.length) break
    let text = ''
    let quoted = false
    while (i < line.length && !/\s/.test(line.charAt(i))) {
      const ch = line.charAt(i)
      const atValueStart = text.endsWith('=') && text.indexOf('=') === text.length - 1
      if ((ch === '"' || ch === "'") && (atValueStart || text === '')) {
        const close = readQuoted(line, i)
        text += close.value
        quoted = atValueStart
        i = close.end
      } else if ((ch === '[' || ch === '{') && atValueStart) {
        const end = matchBracket(line, i)
        text += line.slice(i, end)
        i = end
      } else {
        text += ch
        i++
      }
    }
    tokens.push({ text, quoted })
  }
  return tokens
}

function readQuoted(line: string, start: number): { value: string, end: number } {
  const quote = line.charAt(start)
  let value = ''
  let i = start + 1
  while (i < line.length && line[i] !== quote) {
    if (quote === '"' && line[i] === '\\' && i + 1 < line.length) {
      const next = line.charAt(i + 1)
      value += next === 'n' ? '\n' : next === 't' ? '\t' : next
      i += 2
    } else {
      value += line[i]
      i++
    }
  }
  if (i >= line.length) throw new CallSyntaxError(`unterminated ${quote} quote in: ${line.slice(start)} — close the quote`)
  return { value, end: i + 1 }
}

function matchBracket(line: string, start: number): number {
  let depth = 0
  let inString = false
  for (let i = start; i < line.length; i++) {
    const ch = line[i]
    if (inString) {
      if (ch === '\\') i++
      else if (ch === '"') inString = false
    } else if (ch === '"') inString = true
    else if (ch === '[' || ch === '{') depth++
    else if (ch === ']' || ch === '}') {
      depth--
      if (depth === 0) return i + 1
    }
  }
  throw new CallSyntaxError(`unbalanced brackets in: ${line.slice(start)} — close every [ and {`)
}

/** Parse one console line (see tokenizeLine for quoting). */
export function parseLine(line: string, stringKeys: (tool: string) => ReadonlySet<string> = () => new Set()): ParsedCall {
  const tokens = tokenizeLine(line)
  const tool = checkTool(tokens[0]?.text)
  return parseTokens(tool, tokens.slice(1), stringKeys(tool))
}
