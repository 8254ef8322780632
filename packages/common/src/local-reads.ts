// The local-reads rule: whether a filesystem provider's reads are dsh-fs-local's own, so a node:fs fast path may stand in.

/** What the fast path stands in for (resolve and stat still go through ctx.fs on both paths). */
const READS = ['processPath', 'lstat', 'readText', 'streamText', 'readBytes', 'listDir']
/** Reads a later host adds (readByteRange from DSH 0.1.3): overriding one is not local, lacking it is (0.1.0 has none). */
const LATER_READS = ['readByteRange']
const ALL_READS = [...READS, ...LATER_READS]

/**
 * Whether node:fs sees what the provider would: dsh-fs-local and subclasses that leave every read alone
 * (dsh-fs-sandbox fences only writes). By shape, not `instanceof`: the host may load another copy of
 * dsh-fs-local. Unknown → false.
 */
export function readsAreLocal(fs: object): boolean {
  if (ALL_READS.some((method) => Object.hasOwn(fs, method))) return false
  for (let proto = Object.getPrototypeOf(fs); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (!ALL_READS.some((method) => Object.hasOwn(proto, method))) continue
    // The first class that defines a read must be the local provider, defining all of the first host's.
    return (proto as { constructor?: { name?: string } }).constructor?.name === 'LocalFileSystem' && READS.every((method) => Object.hasOwn(proto, method))
  }
  return false
}
