// The scripted model: an LLM adapter that plays fixed or computed turns and records every request.
import type { GenerateOptions, LlmResolvedModelInfo, StreamChunk } from '@deepseek-ai/dsh-llm'
import { CallId, LlmAdapter } from '@deepseek-ai/dsh-llm'

/** One scripted model turn: fixed chunks, or chunks computed from the request (earlier tool results). */
export type ScriptEntry = StreamChunk[] | ((request: GenerateOptions) => StreamChunk[])

/** A model turn that answers with plain text and stops. */
export function textTurn(text: string): StreamChunk[] {
  return [
    { type: 'block-start', index: 0, blockType: 'text' },
    { type: 'text-delta', index: 0, text },
    { type: 'block-end', index: 0, block: { type: 'text', text } },
    { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
    { type: 'finish', reason: { kind: 'stop' } },
  ]
}

/** A model turn that calls tools (one or several, in one response). */
export function toolTurn(...calls: { id: string, name: string, args: unknown }[]): StreamChunk[] {
  const chunks: StreamChunk[] = []
  calls.forEach((call, index) => {
    const id = CallId(call.id)
    const json = JSON.stringify(call.args)
    chunks.push(
      { type: 'block-start', index, blockType: 'tool-call' },
      { type: 'tool-call-delta', index, id, name: call.name, argumentsDelta: json },
      { type: 'block-end', index, block: { type: 'tool-call', id, name: call.name, arguments: json } },
    )
  })
  chunks.push(
    { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
    { type: 'finish', reason: { kind: 'tool-calls' } },
  )
  return chunks
}

/**
 * The only fake in the kit: a model that replays a script, one entry per request, and records
 * every request (tools offered, system prompt, messages). `imageInput` makes its route declare
 * image input, the gate the host's image tools read through ctx.llm.resolveModelInfo.
 */
export class ScriptedAdapter extends LlmAdapter {
  readonly requests: GenerateOptions[] = []

  constructor(private readonly script: ScriptEntry[], private readonly imageInput = false) {
    super()
  }

  override resolveModel(provider: string, model: string): Promise<LlmResolvedModelInfo> {
    return Promise.resolve({
      provider,
      id: model,
      name: model,
      inputModalities: this.imageInput ? ['text', 'image'] : ['text'],
    } as LlmResolvedModelInfo)
  }

  async * stream(options: GenerateOptions): AsyncIterable<StreamChunk> {
    this.requests.push(options)
    const entry = this.script.shift() ?? textTurn('(script exhausted)')
    const chunks = typeof entry === 'function' ? entry(options) : entry
    for (const chunk of chunks) {
      if (options.signal?.aborted) throw new Error('aborted')
      yield chunk
    }
  }
}
