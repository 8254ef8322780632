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
          size: { type: 'integer' },
          path: { type: 'string' },
          modified: { type: 'string' },
          permissions: { type: 'string' },
          target: { type: 'string' },
          error: { type: 'string' },
          siblings_cut: { type: 'boolean' },
          collapsed: { type: 'string', enum: ['gitignored', 'heavy'] },
          children: { type: 'integer' },
        },
      },
    },
    stats: {
      type: 'object',
      required: true,
      additionalProperties: false,
      properties: {
        total: { type: 'integer', required: true },
        files: { type: 'integer', required: true },
        directories: { type: 'integer', required: true },
        others: { type: 'integer', required: true },
        symlinks: { type: 'integer' },
      },
    },
    truncated: {
      type: 'object',
      additionalProperties: false,
      properties: {
        shown: { type: 'integer', required: true },
        total: { type: 'integer', required: true },
        remaining: { type: 'integer', required: true },
        next_offset: { type: 'integer' },
      },
    },
    ignored: { type: 'integer' },
    gitignored: { type: 'integer' },
    offset: { type: 'integer' },
    filtered: { type: 'integer' },
    partial: { type: 'boolean' },
    metadata_unavailable: { type: 'boolean' },
  },
} as const
