/** Pure: the image room's value -> the description the model reads, and the image block it sees. */

import { AttachmentId, type ImageAttachmentRef } from '@deepseek-ai/dsh-attachment'
import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { formatBytes } from '@gencode-ai/dsh-tool-common'
import { FORMAT_NAMES } from './sniff.ts'
import type { Attached, ImageValue } from './value.ts'

/** read_file's documented unit names ('48.1 KB'), on the shared binary steps. */
const UNITS = ['bytes', 'KB', 'MB'] as const

export const sizeOf = (bytes: number): string => formatBytes(bytes, UNITS)

function describe(value: ImageValue): string {
  const animation = value.animated === undefined ? '' : `, animated (${value.animated.frames} frames)`
  const head = `${FORMAT_NAMES[value.format]} image, ${value.width}x${value.height} px, ${sizeOf(value.bytes)}${animation}`
  const shown = value.attached
  if (shown === null) {
    const why = value.reason === 'no-image-input' ? 'the current model does not take image input' : 'no attachment store is composed'
    return `${head}. Not attached: ${why}.`
  }
  const what = value.animated === undefined ? 'attached' : `frame ${value.animated.shown} attached`
  const size = `${shown.media_type}, ${sizeOf(shown.bytes)}`
  if (shown.width === value.width && shown.height === value.height) return `${head}; ${what} as ${size}.`
  const x = (value.width / shown.width).toFixed(2)
  const y = (value.height / shown.height).toFixed(2)
  const scale = x === y ? `multiply coordinates by ${x}` : `multiply x by ${x} and y by ${y}`
  return `${head}; ${what} downscaled to ${shown.width}x${shown.height} px (${size}): ${scale} to locate features in the original.`
}

/** The value's record of an attachment as the host's image block takes it. */
export function attachmentRef({ attachment_id: id, media_type: mediaType, bytes, width, height, name }: Attached): ImageAttachmentRef {
  return { attachmentId: AttachmentId(id), mediaType, bytes, width, height, ...name === undefined ? {} : { name } }
}

export function renderImage(value: ImageValue): ContentBlock[] {
  const text = describe(value)
  if (value.attached === null) return [{ type: 'text', text }]
  return [{ type: 'text', text }, { type: 'image', attachment: attachmentRef(value.attached) }]
}
