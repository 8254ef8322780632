// Anthropic Messages for the scripted model (DSH 0.1.6's default, /v1/messages): a request read as the chat shape, a reply as SSE events.
import type { ServerResponse } from 'node:http'
import type { ChatRequest, Reply } from './model-server.ts'

type Block =
  | { type: 'text', text: string }
  | { type: 'tool_use', id: string, name: string, input: unknown }
  | { type: 'tool_result', tool_use_id: string, content?: string | { type: string, text?: string }[], is_error?: boolean }
  | { type: string }

/** One /v1/messages request body, as a Messages client sends it. */
export interface MessagesRequest {
  model?: string
  system?: string | { type: string, text?: string }[]
  messages: { role: 'user' | 'assistant', content: string | Block[] }[]
  tools?: { name: string, description?: string, input_schema?: unknown }[]
  stream?: boolean
}

const textOf = (content: string | { type: string, text?: string }[] | undefined): string =>
  typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join('')

/** The request in the chat-completions shape the script reads: tool_use blocks as tool_calls, tool_result blocks as tool messages. */
export function chatShapeOf(body: MessagesRequest): ChatRequest {
  const messages: ChatRequest['messages'] = []
  const system = textOf(body.system)
  if (system !== '') messages.push({ role: 'system', content: system })
  for (const message of body.messages) {
    if (typeof message.content === 'string') {
      messages.push({ role: message.role, content: message.content })
      continue
    }
    const text = message.content.filter((block): block is { type: 'text', text: string } => block.type === 'text').map((block) => block.text).join('')
    const calls = message.content.filter((block): block is Extract<Block, { type: 'tool_use' }> => block.type === 'tool_use')
    const results = message.content.filter((block): block is Extract<Block, { type: 'tool_result' }> => block.type === 'tool_result')
    for (const result of results) messages.push({ role: 'tool', tool_call_id: result.tool_use_id, content: textOf(result.content) })
    if (text !== '' || calls.length > 0) {
      messages.push({
        role: message.role,
        content: text,
        ...calls.length === 0 ? {} : {
          tool_calls: calls.map((call) => ({ id: call.id, function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) } })),
        },
      })
    }
  }
  const tools = (body.tools ?? []).map((tool) => ({
    type: 'function',
    function: {
      name: tool.name, ...tool.description === undefined ? {} : { description: tool.description }, parameters: tool.input_schema,
    },
  }))
  return { ...body.model === undefined ? {} : { model: body.model }, messages, ...tools.length === 0 ? {} : { tools } }
}

/** The reply as a Messages stream: message_start, one content block per text or tool call, message_delta, message_stop. */
export function writeMessagesStream(
  res: ServerResponse, reply: Reply, ids: { message: string, nextToolId: () => string }, model: string,
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
  const send = (type: string, fields: Record<string, unknown> = {}) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`)
  send('message_start', {
    message: { id: ids.message, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  })
  if ('text' in reply) {
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
    send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: reply.text } })
    send('content_block_stop', { index: 0 })
  } else {
    reply.calls.forEach((call, index) => {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: ids.nextToolId(), name: call.name, input: {} } })
      // The input arrives in pieces, as a real stream cuts it; the client joins them.
      const json = JSON.stringify(call.args)
      const cut = Math.floor(json.length / 2)
      for (const part of [json.slice(0, cut), json.slice(cut)]) send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } })
      send('content_block_stop', { index })
    })
  }
  send('message_delta', { delta: { stop_reason: 'text' in reply ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } })
  send('message_stop')
  res.end()
}
