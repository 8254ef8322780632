/** The image room's variant of the read_file value, and an attached image's record (notebook outputs carry it too). */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { object, required, tag } from '@gencode-ai/dsh-tool-common'
import { GREW, integer, string } from '../fields.ts'

/** An image saved to the attachment store, as sent to the model (after any downscale). */
const ATTACHED = object({
  attachment_id: string,
  media_type: { type: 'string', enum: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'], required: true },
  bytes: integer,
  width: integer,
  height: integer,
  name: { type: 'string' },
})
/** null when not attached (the image variant says why in `reason`, a notebook output in its text). */
export const ATTACHMENT = required({ oneOf: [ATTACHED, { type: 'null' }] } as const)

export const IMAGE = object({
  kind: tag('image'),
  path: string,
  format: { type: 'string', enum: ['png', 'jpeg', 'gif', 'webp', 'bmp'], required: true },
  /** As displayed: after the EXIF orientation. */
  width: integer,
  height: integer,
  /** The file's size in bytes. */
  bytes: integer,
  /** An animation's frame count and the (1-based) frame attached. */
  animated: object({ frames: integer, shown: integer }),
  attached: ATTACHMENT,
  reason: { type: 'string', enum: ['no-image-input', 'no-attachment-store'] },
  ...GREW,
})

export type ImageValue = InferValue<typeof IMAGE>
export type Attached = NonNullable<ImageValue['attached']>
