// tool-list-dir's config schema and its default guidance.
import Schema from '@deepseek-ai/schemastery'
import { OutsideWorkspace } from '@gencode-ai/dsh-tool-common'

/**
 * The guidance text of the README's Model Experience section, word for word: 0.3.3's, with the job `pattern` does that the
 * host's glob does not (glob lists files by name; pattern narrows this tree, directories included, with its counts).
 */
export const DEFAULT_GUIDANCE = 'Use the list_directory tool — not shell commands like ls — to browse directory structures. '
  + 'When truncated narrow the tree with pattern (matches directories too, keeps counts), or use glob to find files by name, '
  + 'grep to search contents.'

export const Config = Schema.object({
  toolName: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('list_directory').description('The tool name the model calls.'),
  order: Schema.number().default(1350).description('Prompt order of the guidance section.'),
  guidance: Schema.string().default(DEFAULT_GUIDANCE).description('Guidance section text; empty registers none.'),
  maxEntries: Schema.natural().min(1).max(1000).default(100).description('Most entries one call returns.'),
  cachedEntries: Schema.natural().max(10_000_000).default(200_000)
    .description('Entries of counted directories a host keeps for later listings (about 100 bytes each, a directory 4 more); 0 keeps none.'),
  outsideWorkspace: OutsideWorkspace,
})

export type Config = ReturnType<typeof Config>
