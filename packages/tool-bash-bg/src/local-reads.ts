/**
 * Whether a provider's reads are dsh-fs-local's own, so node:fs sees what the provider would:
 * dsh-fs-local and subclasses that leave every read alone (dsh-fs-sandbox fences only writes).
 * By shape, not `instanceof`: the host may load another copy of dsh-fs-local. Unknown → false.
 *
 * Identical in tool-list-dir, tool-read and tool-bash-bg (the plugins share no runtime code).
 */

/** What the fast path stands in for (resolve and stat still go through ctx.fs on both paths). */
const READS = ['processPath', 'lstat', 'readText', 'streamText', 'readBytes', 'listDir']

export function readsAreLocal(fs: object): boolean {
  if (READS.some((method) => Object.hasOwn(fs, method))) return false
  for (let proto = Object.getPrototypeOf(fs); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const defined = READS.filter((method) => Object.hasOwn(proto, method))
    if (defined.length === 0) continue
    // The first class that defines a read must be the local provider, defining all of them.
    return (proto as { constructor?: { name?: string } }).constructor?.name === 'LocalFileSystem' && defined.length === READS.length
  }
  return false
}
