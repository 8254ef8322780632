// The list_directory tool definition: schema, execute, render and the UI card.
import type { Context } from '@deepseek-ai/cordis'
import { defineTool, type GenericCallView, type GenericResultView, type ToolDefinition, type ToolResult } from '@deepseek-ai/dsh-tools'
import { blanksAsAbsent, type OutsideGate, shownPath, withRole } from '@gencode-ai/dsh-tool-common'
import { callMode, parameters, parseArgs, type ListArgs } from './args.ts'
import type { Config } from './config.ts'
import { chooseSource, listDirectory } from './list.ts'
import { renderListing } from './render.ts'
import { LISTING_SCHEMA } from './types.ts'
import { ListingCache } from './walk/listing-cache.ts'

export function listDirectoryTool(ctx: Context, config: Config, gate: OutsideGate): ToolDefinition {
  // One per plugin instance: a host's later listings re-read only the directories that changed.
  const cache = config.cachedEntries > 0 ? new ListingCache(config.cachedEntries) : undefined
  return withRole(blanksAsAbsent(defineTool({
    name: config.toolName,
    description: 'List a directory with sizes.',
    parameters: parameters(config.maxEntries),
    output: {
      schema: LISTING_SCHEMA,
      render: (args, value) => [{ type: 'text', text: renderListing(value, { ...callMode(args, config.maxEntries), pathArg: args.path }) }],
    },
    isConcurrencySafe: () => true,
    execute: async (args, exec) => {
      const request = parseArgs(args, config.maxEntries)
      return await listDirectory(ctx, exec, request, gate, (root) => chooseSource(ctx, root, cache))
    },
    presentCall,
    presentResult,
  }), ['path']), 'list')
}

export function presentCall(args: ListArgs): GenericCallView {
  const flags = [
    args.recursive === true || args.depth !== undefined ? `tree${args.depth === undefined ? '' : `, depth ${args.depth}`}` : undefined,
    args.pattern === undefined ? undefined : shownPath(args.pattern),
    args.long === true ? 'long' : undefined,
    args.all === true ? 'all' : undefined,
    (args.offset ?? 0) > 0 ? `from ${args.offset}` : undefined,
  ].filter((flag) => flag !== undefined)
  const title = `List ${shownPath(args.path)}${flags.length > 0 ? ` (${flags.join(', ')})` : ''}`
  return { card: 'generic', title, kind: 'read', locations: [{ path: args.path }] }
}

/** The completed card: the model's own text (the README's layout is made for people too). */
export function presentResult(args: ListArgs, result: ToolResult): GenericResultView | undefined {
  return result.isError ? undefined : { card: 'generic', title: `Listed ${shownPath(args.path)}`, content: result.content }
}
