/** The canonical read_file value's schema: one variant per format room, and the session's two (tagged by `kind`). */

import type { InferValue } from '@deepseek-ai/dsh-tools'
import { IMAGE } from './formats/image/value.ts'
import { NOTEBOOK } from './formats/notebook/value.ts'
import { PDF } from './formats/pdf/value.ts'
import { TEXT } from './formats/text/value.ts'
import { DEFERRED, UNCHANGED } from './session/value.ts'

/** Tagged by `kind`, as bash_bg's values are: inside a read value `type` already names a notebook cell's or output's type. */
export const VALUE_SCHEMA = { oneOf: [TEXT, NOTEBOOK, IMAGE, PDF, UNCHANGED, DEFERRED] } as const

export type ReadValue = InferValue<typeof VALUE_SCHEMA>
