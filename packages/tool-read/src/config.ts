import Schema from '@deepseek-ai/schemastery'

export type OutsideWorkspace = 'ask' | 'allow' | 'deny'

export interface Config {
  toolName: string
  order: number
  guidance: string
  maxEntries: number
  maxLineLength: number
  maxBytes: number
  /** Largest file read whole (images, notebooks, PDFs; non-UTF-8 text through a provider that is not the local disk). */
  maxFileBytes: number
  outsideWorkspace: OutsideWorkspace
}

export const DEFAULT_GUIDANCE = 'Use read_file, not cat/head/tail/pdftotext, to read files.'

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  toolName: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).default('read_file')
    .description('The tool name the model calls.'),
  order: Schema.number().default(1150).description('Prompt order of the guidance section.'),
  guidance: Schema.string().default(DEFAULT_GUIDANCE).description('Guidance section text; empty registers none.'),
  maxEntries: Schema.natural().min(1).max(100_000).default(2000).description('Lines per call (default and largest limit).'),
  maxLineLength: Schema.natural().min(1).max(1_000_000).default(2000).description('Characters kept of one line.'),
  maxBytes: Schema.natural().min(1024).default(102_400).description('Bytes of rendered rows per result (the footer comes on top).'),
  maxFileBytes: Schema.natural().min(1).default(52_428_800).description('Largest file read whole (images, notebooks, PDFs).'),
  outsideWorkspace: Schema.union(['ask', 'allow', 'deny'] as const).default('ask')
    .description('Paths outside the workspace: ask for approval, allow, or deny.'),
})
