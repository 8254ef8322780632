import type { InferValue } from '@deepseek-ai/dsh-tools'

const integer = { type: 'integer' } as const
const count = { type: 'integer', required: true } as const
const text = { type: 'string' } as const
const flag = { type: 'boolean' } as const

/** The canonical value's schema (seed 003's shape plus the extension fields). */
export const LISTING_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    entries: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          name: { type: 'string', required: true },
          type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'], required: true },
          size: integer,
          /** Recursive: relative to the listed path, '/'-separated. */
          path: text,
          modified: text,
          permissions: text,
          /** A symlink's link text. */
          target: text,
          /** Why a directory could not be read. */
          error: text,
          /** Recursive and cut: the last shown entry of its directory while later siblings did not fit. */
          siblings_cut: flag,
          /** Recursive: a directory shown as one line, not descended. */
          collapsed: { type: 'string', enum: ['gitignored', 'heavy'] },
          /** A collapsed directory's direct children. */
          children: integer,
        },
      },
    },
    stats: {
      type: 'object',
      required: true,
      additionalProperties: false,
      properties: { total: count, files: count, directories: count, others: count, symlinks: integer },
    },
    truncated: {
      type: 'object',
      additionalProperties: false,
      /** next_offset: extension modes, the `offset` that continues where this result stopped. */
      properties: { shown: count, total: count, remaining: count, next_offset: integer },
    },
    ignored: integer,
    /** Recursive: files and other non-directories the repository's .gitignore files hide. */
    gitignored: integer,
    /** Entries skipped before the first shown one. */
    offset: integer,
    /** Entries the type / pattern filters left out. */
    filtered: integer,
    /** The walk stopped counting at its budget: totals are lower bounds. */
    partial: flag,
    /** `long` through a provider that reports no modification times, permissions or link text. */
    metadata_unavailable: flag,
  },
} as const

export type Listing = InferValue<typeof LISTING_SCHEMA>

export type Entry = Listing['entries'][number]
