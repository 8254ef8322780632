// tool-read's config schema and its default guidance.
import Schema from '@deepseek-ai/schemastery'
import { OutsideWorkspace } from '@gencode-ai/dsh-tool-common'

export const DEFAULT_GUIDANCE = 'Use read_file, not cat/head/tail/pdftotext, to read files.'

export const Config = Schema.object({
  toolName: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('read_file')
    .description('The tool name the model calls.'),
  order: Schema.number().default(1150).description('Prompt order of the guidance section.'),
  guidance: Schema.string().default(DEFAULT_GUIDANCE).description('Guidance section text; empty registers none.'),
  maxEntries: Schema.natural().min(1).max(100_000).default(2000).description('Lines per call (default and largest limit).'),
  maxLineLength: Schema.natural().min(1).max(1_000_000).default(2000).description('Characters kept of one line.'),
  maxBytes: Schema.natural().min(1024).default(102_400).description('Bytes of rendered rows per result (the footer comes on top).'),
  maxBytesPerStep: Schema.natural().min(1024).default(262_144).description('Bytes of text all read_file calls of one agent step show together.'),
  dedupUnchanged: Schema.boolean().default(true).description('Answer a re-read the model still has, same bytes, with a short "unchanged" note.'),
  maxFileBytes: Schema.natural().min(1).default(52_428_800).description('Largest file read whole (images, notebooks, PDFs).'),
  pdfMemoryMB: Schema.natural().min(64).default(512).description('Memory one PDF parse may use, in MB (its thread\'s heap and decoded streams).'),
  pdfTimeoutMs: Schema.natural().min(100).default(30_000).description('Time one PDF read may take, in ms.'),
  outsideWorkspace: OutsideWorkspace,
})

export type Config = ReturnType<typeof Config>
