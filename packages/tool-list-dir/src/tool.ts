import type { Context } from '@deepseek-ai/cordis'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { MAX_DEPTH, parseArgs, type ListArgs } from './args.ts'
import type { Config } from './config.ts'
import { listDirectory } from './list.ts'
import { presentCall, presentResult } from './present.ts'
import { renderListing } from './render.ts'
import { LISTING_SCHEMA } from './schema.ts'
import type { Listing } from './types.ts'

export function listDirectoryTool(ctx: Context, config: Config): ToolDefinition {
  return defineTool({
    name: config.toolName,
    description: 'List a directory: directories first, then files, with sizes and counts.',
    parameters: {
      path: { type: 'string', required: true, description: 'Directory, relative to the workspace or absolute.' },
      ignore: { type: 'array', items: { type: 'string' }, description: 'Basename globs to hide; only * and ? are wildcards.' },
      recursive: { type: 'boolean', description: 'Show subdirectories as a tree.' },
      depth: { type: 'integer', description: `Tree levels below path, 1-${MAX_DEPTH}; default 3.` },
      pattern: { type: 'string', description: 'Glob on the relative path; without / it matches names at any depth.' },
      sort: { type: 'string', enum: ['name', 'size', 'modified', 'type'] },
      reverse: { type: 'boolean' },
      directories_only: { type: 'boolean' },
      files_only: { type: 'boolean' },
      long: { type: 'boolean', description: 'Add modified time, permissions, symlink targets.' },
      limit: { type: 'integer', description: `Most entries; default and max ${config.maxEntries}.` },
    },
    output: {
      schema: LISTING_SCHEMA,
      render: (args, value) => {
        const request = parseArgs(args as ListArgs, config.maxEntries)
        return [{
          type: 'text',
          text: renderListing(value as Listing, {
            toolName: config.toolName,
            pathArg: args.path,
            recursive: request.recursive,
            long: request.long,
            extended: request.extended,
            filters: request.filters,
          }),
        }]
      },
    },
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      const request = parseArgs(args as ListArgs, config.maxEntries)
      return await listDirectory(ctx, exec, request) as never
    },
    presentCall: (args) => presentCall(args as ListArgs),
    presentResult: (args, result) => presentResult(args as ListArgs, result),
  })
}
