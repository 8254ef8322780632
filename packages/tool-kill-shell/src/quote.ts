// A shell_id echoed into a message: an id-shaped value as is, anything else quoted and cut.
import { quoted } from '@gencode-ai/dsh-tool-common'

/**
 * An id-shaped value as is (`Shell not found: invalid-id`, the README's wording); anything else (blanks,
 * quotes, control characters, over 120 characters) quoted and cut.
 */
export function shownId(id: string): string {
  return /^[\w.:-]{1,120}$/.test(id) ? id : quoted(id)
}
