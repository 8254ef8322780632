// The error a tool call ends with when its signal aborts: the host's TOOL_ABORTED code, named AbortError.
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { TOOL_ABORTED } from '@deepseek-ai/dsh-tools'

export function aborted(message = 'tool call aborted'): HarnessError {
  const error = new HarnessError(message, TOOL_ABORTED)
  error.name = 'AbortError'
  return error
}
