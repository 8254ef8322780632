import { defineTool } from '@deepseek-ai/dsh-tools'

/** The host's own cost of one tool call (schema checks, pipeline, render): a no-op tool to subtract as the floor. */
export function registerNoop(ctx) {
  ctx.tools.register(defineTool({
    name: 'bench_noop',
    description: 'no-op',
    parameters: {},
    output: { schema: { type: 'null' }, render: () => [{ type: 'text', text: '' }] },
    execute: async () => null,
  }))
}
