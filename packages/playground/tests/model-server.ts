import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chatShapeOf, writeMessagesStream, type MessagesRequest } from './messages-protocol.ts'

/** One chat-completions request as the dsh-llm-deepseek adapter sends it. */
export interface ChatRequest {
  model?: string
  messages: {
    role: string
    content?: unknown
    tool_calls?: { id: string, function: { name: string, arguments: string } }[]
    tool_call_id?: string
  }[]
  tools?: { type: string, function: { name: string, description?: string, parameters?: unknown } }[]
}

/** A tool result seen in a request: the call it answers and the text the model received. */
export interface SeenResult {
  name: string
  args: Record<string, unknown>
  text: string
}

export type Reply = { text: string } | { calls: { name: string, args: unknown }[] }

interface RecordedRequest {
  /** Which protocol asked: chat completions, or Anthropic Messages (read into the chat shape). */
  protocol: 'chat' | 'messages'
  body: ChatRequest
  /** The tool names offered in this request. */
  tools: string[]
  /** The system prompt text. */
  system: string
}

function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('')
  return ''
}

/** The tool results of a request, in order, each joined to the assistant call it answers. */
export function resultsOf(body: ChatRequest): SeenResult[] {
  const calls = new Map<string, { name: string, args: Record<string, unknown> }>()
  const out: SeenResult[] = []
  for (const message of body.messages) {
    for (const call of message.tool_calls ?? []) {
      calls.set(call.id, { name: call.function.name, args: JSON.parse(call.function.arguments || '{}') as Record<string, unknown> })
    }
    if (message.role === 'tool' && message.tool_call_id !== undefined) {
      const call = calls.get(message.tool_call_id)
      out.push({ name: call?.name ?? '?', args: call?.args ?? {}, text: textOfContent(message.content) })
    }
  }
  return out
}

export interface ScriptedModel {
  url: string
  requests: RecordedRequest[]
  close(): Promise<void>
}

/**
 * A test-only SSE model on loopback, OpenAI-compatible (`/chat/completions`) and Anthropic
 * Messages (`/v1/messages`, DSH 0.1.6's default). `script` sees each request in the chat shape
 * (with the earlier tool results, so arguments known only at run time — a shell_id — can be
 * used) and returns the next reply. Requests that offer no tools (the session-title side
 * request) get a short text answer.
 */
export async function startScriptedModel(
  script: (request: ChatRequest, results: SeenResult[]) => Reply | Promise<Reply>,
): Promise<ScriptedModel> {
  const requests: RecordedRequest[] = []
  let callSeq = 0
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? ''
    const protocol = path.endsWith('/chat/completions') ? 'chat' : path.endsWith('/v1/messages') ? 'messages' : undefined
    if (req.method !== 'POST' || protocol === undefined) {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown
    const body = protocol === 'chat' ? raw as ChatRequest : chatShapeOf(raw as MessagesRequest)
    const tools = (body.tools ?? []).map((t) => t.function.name)
    const system = body.messages.filter((m) => m.role === 'system').map((m) => textOfContent(m.content)).join('\n')
    requests.push({ protocol, body, tools, system })
    const reply: Reply = tools.length === 0 ? { text: 'Scripted session' } : await script(body, resultsOf(body))
    if (protocol === 'messages') {
      writeMessagesStream(res, reply, { message: `msg_${requests.length}`, nextToolId: () => `toolu_${++callSeq}` }, body.model ?? 'scripted')
      return
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' })
    const send = (payload: unknown) => res.write(`data: ${JSON.stringify(payload)}\n\n`)
    const id = `chatcmpl-${requests.length}`
    if ('text' in reply) {
      send({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: reply.text }, finish_reason: null }] })
      send({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
    } else {
      send({
        id,
        object: 'chat.completion.chunk',
        choices: [{
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: reply.calls.map((call, index) => ({ index, id: `call_${++callSeq}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } })),
          },
          finish_reason: null,
        }],
      })
      send({ id, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })
    }
    res.end('data: [DONE]\n\n')
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: String(error), code: 'SCRIPT_ERROR' } }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
