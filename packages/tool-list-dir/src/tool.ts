import type { Context } from '@deepseek-ai/cordis'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { blanksAsAbsent } from './absent.ts'
import { callMode, MAX_DEPTH, parseArgs, type ListArgs } from './args.ts'
import type { Config } from './config.ts'
import { listDirectory } from './list.ts'
import { presentCall, presentResult } from './present.ts'
import { renderListing } from './render.ts'
import { LISTING_SCHEMA } from './schema.ts'
import type { OutsideGate } from './workspace.ts'
import type { Listing } from './types.ts'

export function listDirectoryTool(ctx: Context, config: Config, gate: OutsideGate): ToolDefinition {
  const tool = defineTool({
    name: config.toolName,
    description: 'List a directory, directories first, with sizes.',
    parameters: {
      path: { type: 'string', required: true },
      ignore: { type: 'array', items: { type: 'string' }, description: 'Basename globs to hide (* and ? only).' },
      recursive: { type: 'boolean', description: 'Tree view.' },
      depth: { type: 'integer', description: `Tree levels, 1-${MAX_DEPTH}, default 3.` },
      pattern: { type: 'string', description: 'Glob on relative paths; no / matches basenames.' },
      sort: { type: 'string', enum: ['name', 'size', 'modified', 'type'] },
      reverse: { type: 'boolean' },
      directories_only: { type: 'boolean' },
      files_only: { type: 'boolean' },
      long: { type: 'boolean', description: 'Add mtime, permissions.' },
      limit: { type: 'integer', description: `Max ${config.maxEntries}.` },
      offset: { type: 'integer' },
      all: { type: 'boolean', description: 'Tree: expand gitignored, node_modules etc.' },
    },
    output: {
      schema: LISTING_SCHEMA,
      render: (args, value) => {
        const mode = callMode(args as ListArgs, config.maxEntries)
        return [{ type: 'text', text: renderListing(value as Listing, { ...mode, pathArg: args.path }) }]
      },
    },
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      const request = parseArgs(args as ListArgs, config.maxEntries)
      return await listDirectory(ctx, exec, request, gate) as never
    },
    presentCall: (args) => presentCall(args as ListArgs),
    presentResult: (args, result) => presentResult(args as ListArgs, result),
  })
  return blanksAsAbsent(tool, ['path'])
}
