// list_directory's value schema, the types inferred from it, and a directory's child as a source reports it.
import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object } from '@gencode-ai/dsh-tool-common'

const integer = { type: 'integer' } as const
const count = { type: 'integer', required: true } as const
const text = { type: 'string' } as const
const flag = { type: 'boolean' } as const

/** The canonical value's schema (the README's Canonical value section). */
export const LISTING_SCHEMA = object({
  path: { type: 'string', required: true },
  entries: {
    type: 'array',
    required: true,
    items: object({
      name: { type: 'string', required: true },
      type: { type: 'string', enum: ['file', 'directory', 'symlink', 'other'], required: true },
      size: integer,
      path: text,
      modified: text,
      permissions: text,
      target: text,
      error: text,
      /** Recursive and cut: the last shown entry of its directory while later siblings did not fit. */
      siblings_cut: flag,
      /** Recursive: a directory shown as one line (with its direct-children count), not descended. */
      collapsed: { type: 'string', enum: ['gitignored', 'heavy'] },
      children: integer,
    }),
  },
  stats: { ...object({ total: count, files: count, directories: count, others: count, symlinks: integer }), required: true },
  truncated: object({ shown: count, total: count, remaining: count, next_offset: integer }),
  ignored: integer,
  gitignored: integer,
  /** Git's index could not be read (or not through this provider): `.gitignore` may have hidden tracked files. */
  tracked_unknown: flag,
  /** .gitignore files (git-relative) not applied: past the rules a listing matches (100,000 a file; 200,000, 1,000 patterns in all). */
  gitignore_refused: { type: 'array', items: text },
  offset: integer,
  filtered: integer,
  /** The walk stopped counting at its budget: totals are lower bounds. */
  partial: flag,
  metadata_unavailable: flag,
})

export type Listing = InferValue<typeof LISTING_SCHEMA>
export type Entry = Listing['entries'][number]

/** One child of a directory as a source reports it, before filtering and shaping; `mode`: st_mode's permission bits. */
export interface Child extends Pick<Entry, 'name' | 'type' | 'size' | 'target' | 'error' | 'collapsed' | 'children'> {
  mtimeMs?: number
  mode?: number
}
