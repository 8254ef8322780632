// list_directory's errors in the host's vocabulary: bad arguments, and cancellation.
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { checkFsAborted } from '@gencode-ai/dsh-tool-common'

export function argumentError(message: string, options?: ErrorOptions): HarnessError {
  return new HarnessError(message, 'INVALID_ARGS', options)
}

/** Cancellation in the host's vocabulary (as ctx.fs reports it), so the result carries FS_ABORTED. */
export function checkAborted(signal: AbortSignal): void {
  checkFsAborted(signal, 'the listing was')
}
