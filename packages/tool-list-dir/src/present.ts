import type { GenericCallView, GenericResultView, ToolResult } from '@deepseek-ai/dsh-tools'
import type { ListArgs } from './args.ts'

/** The pending card: pure, from the arguments alone. */
export function presentCall(args: ListArgs): GenericCallView {
  const flags = [
    args.recursive === true || args.depth !== undefined ? `tree${args.depth === undefined ? '' : `, depth ${args.depth}`}` : undefined,
    args.pattern === undefined ? undefined : args.pattern,
    args.long === true ? 'long' : undefined,
    args.all === true ? 'all' : undefined,
    (args.offset ?? 0) > 0 ? `from ${args.offset}` : undefined,
  ].filter((flag) => flag !== undefined)
  return {
    card: 'generic',
    title: `List ${args.path}${flags.length > 0 ? ` (${flags.join(', ')})` : ''}`,
    kind: 'read',
    locations: [{ path: args.path }],
  }
}

/** The completed card: the model's own text (the seed layout is made for people too). */
export function presentResult(args: ListArgs, result: ToolResult): GenericResultView | undefined {
  if (result.isError) return undefined
  return { card: 'generic', title: `Listed ${args.path}`, content: result.content }
}
