// tool-list-dir's config schema and its default guidance.
import Schema from '@deepseek-ai/schemastery'
import { OutsideWorkspace } from '@gencode-ai/dsh-tool-common'

/** The guidance text of the README's Model Experience section, word for word. */
export const DEFAULT_GUIDANCE = 'Use the list_directory tool — not shell commands like ls — to browse directory structures. '
  + 'When truncated use glob to find files by name pattern, or grep to search file contents. '
  + 'Use this for understanding project layouts.'

export const Config = Schema.object({
  toolName: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('list_directory').description('The tool name the model calls.'),
  order: Schema.number().default(1350).description('Prompt order of the guidance section.'),
  guidance: Schema.string().default(DEFAULT_GUIDANCE).description('Guidance section text; empty registers none.'),
  maxEntries: Schema.natural().min(1).max(1000).default(100).description('Most entries one call returns.'),
  outsideWorkspace: OutsideWorkspace,
})

export type Config = ReturnType<typeof Config>
