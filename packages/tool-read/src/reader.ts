/** What every reader (text, image, notebook, pdf) takes and gives: one signature, one row each in tool.ts. */

import type { Context } from '@deepseek-ai/cordis'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { Config } from './config.ts'
import type { Source } from './source.ts'
import type { ReadValue } from './value.ts'

interface ReadOptions {
  /** 1-based first line (cell for notebooks). */
  offset: number
  limit: number
  /** Bytes of rendered text this call may show when the step's shared budget leaves less than maxBytes. */
  maxBytes?: number | undefined
  /** Whether a window may be empty (the step's budget is short): else its first line or cell is always shown. */
  mayBeEmpty?: boolean | undefined
  encoding?: string | undefined
  pages?: string | undefined
}

/** The call a read serves: the host's services and the execution (its agent, its signal). */
export interface Call {
  ctx: Context
  exec: ToolExecution
}

export interface ReadRequest {
  /** The file's bytes. */
  source: Source
  call: Call
  config: Config
  options: ReadOptions
}

export interface ReadResult {
  value: ReadValue
  /** Whether to emit fs/observed, so dsh-tool-fs's edit/write accept a follow-up edit. */
  observe: boolean
}

export type Reader = (request: ReadRequest) => Promise<ReadResult>
