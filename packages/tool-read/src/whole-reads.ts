// One memory budget for the files read whole (images, notebooks, PDFs) across a plugin's concurrent calls.
import type { Context } from '@deepseek-ai/cordis'
import { FsError } from '@deepseek-ai/dsh-fs'

/**
 * Memory a whole-file read takes per byte of the file: its bytes, their copy in a parse thread or decoder, and what the
 * parse builds (a 40 MB PDF read grew the host by ~210 MB; 30 of them at once peaked at 3.8 GB).
 */
const MEMORY_PER_BYTE = 5
/** How many reads of the largest file (maxFileBytes) the budget admits at once. */
const LARGEST_AT_ONCE = 2

/**
 * Memory held by whole-file reads: a read that would pass the budget waits, in arrival order, until earlier reads end (a
 * user expects the read, not a refusal); alone, any read within maxFileBytes goes ahead. An abort ends the wait.
 */
export class WholeReads {
  private held = 0
  private readonly waiting: { bytes: number, grant: () => void }[] = []

  constructor(readonly budget: number) {}

  /** Hold what reading a file of `size` bytes takes until the returned release is called. */
  async hold(size: number, signal: AbortSignal): Promise<() => void> {
    const bytes = size * MEMORY_PER_BYTE
    if (this.waiting.length > 0 || !this.fits(bytes)) {
      if (signal.aborted) throw new FsError('read aborted', 'FS_ABORTED')
      await new Promise<void>((resolve, reject) => {
        const entry = {
          bytes,
          grant: () => {
            signal.removeEventListener('abort', abort)
            resolve()
          },
        }
        const abort = () => {
          this.waiting.splice(this.waiting.indexOf(entry), 1)
          this.pump()
          reject(new FsError('read aborted', 'FS_ABORTED'))
        }
        signal.addEventListener('abort', abort, { once: true })
        this.waiting.push(entry)
      })
    } else {
      this.held += bytes
    }
    let released = false
    return () => {
      if (released) return
      released = true
      this.held -= bytes
      this.pump()
    }
  }

  private fits(bytes: number): boolean {
    return this.held === 0 || this.held + bytes <= this.budget
  }

  /** Grant waiting reads in order while the first fits. */
  private pump(): void {
    for (let next = this.waiting[0]; next !== undefined && this.fits(next.bytes); next = this.waiting[0]) {
      this.waiting.shift()
      this.held += next.bytes
      next.grant()
    }
  }
}

const budgets = new WeakMap<Context, WholeReads>()

/** The plugin's budget (one per plugin context): two reads of maxFileBytes at once, more of smaller files. */
export function wholeReadsOf(ctx: Context, maxFileBytes: number): WholeReads {
  let budget = budgets.get(ctx)
  if (budget === undefined) budgets.set(ctx, budget = new WholeReads(maxFileBytes * MEMORY_PER_BYTE * LARGEST_AT_ONCE))
  return budget
}
