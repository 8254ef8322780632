import { HarnessError } from '@deepseek-ai/dsh-llm'

/** A bad argument: the message names the argument and what would work. */
export function argumentError(message: string): HarnessError {
  return new HarnessError(message, 'INVALID_ARGS')
}
