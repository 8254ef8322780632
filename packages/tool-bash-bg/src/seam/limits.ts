/** What a command run through ctx.subprocess cannot be promised, in the words the value and the kill outcome carry. */

/** The seam has one stop (SIGTERM, its grace, SIGKILL) and no view of the process table. */
export function worldLimits(graceMs: number): string {
  return `runs through ctx.subprocess: a stop is SIGTERM, then SIGKILL after ${graceMs} ms, whatever signal is asked; `
    + 'a process that leaves its process tree is not seen, counted or stopped'
}
