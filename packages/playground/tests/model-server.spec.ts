// The scripted model answers the Anthropic Messages protocol (DSH 0.1.6's default) as a Messages client reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startScriptedModel, type ScriptedModel, type SeenResult } from './model-server.ts'

/** The SSE events of a response: each `event:` name with its parsed `data:` payload. */
async function eventsOf(response: Response): Promise<{ event: string, data: Record<string, unknown> }[]> {
  const text = await response.text()
  return text.split('\n\n').filter((frame) => frame.trim() !== '').map((frame) => {
    const lines = frame.split('\n')
    const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? ''
    const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n')
    return { event, data: JSON.parse(data) as Record<string, unknown> }
  })
}

/** The assistant message a Messages client assembles from the stream: text blocks and tool_use blocks with their joined input. */
function assemble(events: { event: string, data: Record<string, unknown> }[]) {
  const blocks: { type: string, text?: string, id?: string, name?: string, json?: string }[] = []
  let stop: unknown
  for (const { data } of events) {
    const index = data.index as number
    if (data.type === 'content_block_start') blocks[index] = { ...data.content_block as object, json: '' } as never
    if (data.type === 'content_block_delta') {
      const delta = data.delta as { type: string, text?: string, partial_json?: string }
      if (delta.type === 'text_delta') blocks[index]!.text = (blocks[index]!.text ?? '') + delta.text!
      if (delta.type === 'input_json_delta') blocks[index]!.json += delta.partial_json!
    }
    if (data.type === 'message_delta') stop = (data.delta as { stop_reason: unknown }).stop_reason
  }
  return { stop, blocks: blocks.map(({ json, ...block }) => block.type === 'tool_use' ? { ...block, input: JSON.parse(json ?? '') as unknown } : block) }
}

describe('the scripted model on /v1/messages', () => {
  let model: ScriptedModel
  const seen: SeenResult[][] = []
  beforeAll(async () => {
    model = await startScriptedModel((_request, results) => {
      seen.push(results)
      return results.length === 0
        ? { calls: [{ name: 'list_directory', args: { path: 'src', recursive: true } }, { name: 'read_file', args: { file_path: 'a "quoted" name.md' } }] }
        : { text: `saw ${results.length} results` }
    })
  })
  afterAll(async () => { await model.close() })

  const post = (body: unknown) => fetch(`${model.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
    body: JSON.stringify(body),
  })
  const tools = [
    { name: 'list_directory', description: 'List a directory.', input_schema: { type: 'object', properties: { path: { type: 'string' } } } },
    { name: 'read_file', description: 'Read a file.', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } },
  ]

  it('streams tool_use blocks whose input_json_delta pieces join to the arguments, in the protocol order', async () => {
    const response = await post({ model: 'claude-x', max_tokens: 1024, stream: true, system: [{ type: 'text', text: 'be brief' }], tools, messages: [{ role: 'user', content: 'list src' }] })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const events = await eventsOf(response)
    // Every frame's event name is its payload's type.
    for (const { event, data } of events) expect(data.type).toBe(event)
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop',
      'message_delta', 'message_stop',
    ])
    const message = (events[0]!.data as { message: { role: string, model: string, content: unknown[] } }).message
    expect(message).toMatchObject({ role: 'assistant', model: 'claude-x', content: [] })
    const { stop, blocks } = assemble(events)
    expect(stop).toBe('tool_use')
    expect(blocks).toEqual([
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'list_directory', input: { path: 'src', recursive: true } },
      { type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'read_file', input: { file_path: 'a "quoted" name.md' } },
    ])
    const recorded = model.requests.at(-1)!
    expect(recorded.protocol).toBe('messages')
    expect(recorded.tools).toEqual(['list_directory', 'read_file'])
    expect(recorded.system).toBe('be brief')
  })

  it('reads tool_result blocks as the results of the earlier tool_use blocks, and answers with a text block', async () => {
    const response = await post({
      model: 'claude-x', max_tokens: 1024, stream: true, system: 'be brief', tools,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list src' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'looking' }, { type: 'tool_use', id: 'toolu_a', name: 'list_directory', input: { path: 'src' } }, { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { file_path: 'x' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'src/\n  a.ts' }, { type: 'tool_result', tool_use_id: 'toolu_b', content: [{ type: 'text', text: '1\thello' }], is_error: false }] },
      ],
    })
    const { stop, blocks } = assemble(await eventsOf(response))
    expect(stop).toBe('end_turn')
    expect(blocks).toEqual([{ type: 'text', text: 'saw 2 results' }])
    expect(seen.at(-1)).toEqual([
      { name: 'list_directory', args: { path: 'src' }, text: 'src/\n  a.ts' },
      { name: 'read_file', args: { file_path: 'x' }, text: '1\thello' },
    ])
  })

  it('a request without tools (a title request) gets a short text; other paths are 404', async () => {
    const { blocks } = assemble(await eventsOf(await post({ model: 'm', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'title?' }] })))
    expect(blocks).toEqual([{ type: 'text', text: 'Scripted session' }])
    expect((await fetch(`${model.url}/v1/complete`, { method: 'POST', body: '{}' })).status).toBe(404)
  })

  it('still answers /chat/completions in its own shape', async () => {
    const response = await fetch(`${model.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'go' }], tools: tools.map((tool) => ({ type: 'function', function: { name: tool.name, parameters: tool.input_schema } })) }),
    })
    const text = await response.text()
    expect(text).toContain('"finish_reason":"tool_calls"')
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true)
    expect(model.requests.at(-1)!.protocol).toBe('chat')
  })
})
