/**
 * One byte budget shared by the read_file calls of one agent step (one model response and the calls it issued). A call
 * reserves its share when it starts, in the order the loop dispatches them, and gives back what it did not show.
 */

import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { ReadValue } from '../value.ts'
import type { Step } from './surface.ts'

/** A call's share of its step's budget. */
export interface Grant {
  /** Bytes of text the call may show. */
  bytes: number
  /** Whether the step's budget, not the call's own maxBytes, set `bytes`. */
  capped: boolean
  /** Whether the call may show nothing: its step's budget is short and an earlier call of the step took a share. */
  mayBeEmpty: boolean
  /** Give back what was not shown (idempotent). */
  settle(shown: number): void
}

export class StepBudget {
  /** Per session, its current step and the bytes reserved in it (a new step starts at zero). */
  private readonly steps = new WeakMap<object, { turn: number, step: number, used: number }>()

  constructor(private readonly perStep: number) {}

  get limit(): number {
    return this.perStep
  }

  /** Reserve up to `want` bytes in `step`; without a step (a call no agent made) the call has its own `want`. */
  take(step: Step | undefined, want: number): Grant {
    if (step === undefined) return { bytes: want, capped: false, mayBeEmpty: false, settle: () => {} }
    let entry = this.steps.get(step.session)
    if (entry?.turn !== step.turn || entry.step !== step.step) {
      entry = { turn: step.turn, step: step.step, used: 0 }
      this.steps.set(step.session, entry)
    }
    const current = entry
    const bytes = Math.max(0, Math.min(want, this.perStep - current.used))
    // The step's first call always shows its first line, as any call does, so no budget can stall paging.
    const first = current.used === 0
    current.used += bytes
    let open = true
    return {
      bytes,
      capped: bytes < want,
      mayBeEmpty: bytes < want && !first,
      settle: (shown) => {
        if (!open) return
        open = false
        current.used -= Math.max(0, bytes - shown)
      },
    }
  }
}

/** Marked when the step's budget, not the call's maxBytes, ended the window. */
export function withStep(value: ReadValue, grant: Grant): ReadValue {
  return grant.capped && (value.kind === 'text' || value.kind === 'notebook') && value.byte_capped ? { ...value, step_capped: true } : value
}

/** Bytes of text rendered (what the step's budget is charged). */
export function shownBytes(blocks: readonly ContentBlock[]): number {
  return blocks.reduce((sum, block) => sum + (block.type === 'text' ? Buffer.byteLength(block.text, 'utf8') : 0), 0)
}
