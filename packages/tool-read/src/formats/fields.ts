/** Value fields more than one room's variant carries: primitives, growth during a read, the file's identity, a step's cut. */

import { object } from '@gencode-ai/dsh-tool-common'

export const string = { type: 'string', required: true } as const
export const integer = { type: 'integer', required: true } as const
export const flag = { type: 'boolean', required: true } as const

/** Set when the file grew while it was read: the read, counts included, covers its first `from` bytes (its size when opened). */
export const GREW = { grew: object({ from: integer, to: integer }) } as const

/** In an agent session on the local fast path: the file's device, inode, size and mtime, to recognise an unchanged re-read. */
export const IDENTITY = { identity: { type: 'string' } } as const

/** Set when this step's shared budget (maxBytesPerStep), not the call's own, ended the window. */
export const STEP_CAPPED = { step_capped: { type: 'boolean' } } as const
