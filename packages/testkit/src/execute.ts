// One tool call through the host's full pipeline, and the model-facing text of its result.
import type { Context } from '@deepseek-ai/cordis'
import { CallId } from '@deepseek-ai/dsh-llm'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ToolExecutionResult } from '@deepseek-ai/dsh-tools'

let callSeq = 0

/** Run one call through the full tool pipeline (validation, policy, dispatch, render). */
export function execTool(
  ctx: Context, name: string, args: unknown, options: { signal?: AbortSignal, agent?: Agent } = {},
): Promise<ToolExecutionResult> {
  return ctx.tools.execute({
    callId: CallId(`c${++callSeq}`),
    name,
    arguments: args,
    signal: options.signal ?? new AbortController().signal,
    ...options.agent ? { agent: options.agent } : {},
  })
}

/** The model-facing text of a result (text blocks joined). */
export function textOf(result: ToolExecutionResult): string {
  return result.content.map((block) => block.type === 'text' ? block.text : `[${block.type}]`).join('')
}
