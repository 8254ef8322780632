// Crafted `.git/index` files, byte by byte as git writes them (SHA-1 layout), for the hostile-repository specs.

/** One index entry's fixed part: ctime, mtime, dev, ino, mode, uid, gid, size, a 20-byte object id, then `flags`. */
function fixedPart(mode: number, flags: number): Buffer {
  const fixed = Buffer.alloc(62)
  fixed.writeUInt32BE(mode, 24)
  fixed.writeUInt16BE(flags, 60)
  return fixed
}

/** An index holding `entries` (header, entries, a zero checksum: the readers under test do not verify it). */
function indexOf(version: number, count: number, entries: Buffer[]): Buffer {
  const header = Buffer.alloc(12)
  header.write('DIRC', 0, 'latin1')
  header.writeUInt32BE(version, 4)
  header.writeUInt32BE(count, 8)
  return Buffer.concat([header, ...entries, Buffer.alloc(20)])
}

/**
 * A version-4 index whose prefix compression repeats one `pathBytes`-long path `count` times: each entry after the first
 * drops the last byte and adds one, so a few bytes an entry decode to `pathBytes` each (40,000 × 100 KB: 2.6 MB → 4 GB).
 */
export function v4PathBomb(count: number, pathBytes: number): Buffer {
  const path = Buffer.alloc(pathBytes, 'a')
  const entries = [fixedPart(0o100644, 0xfff), Buffer.from([0]), path, Buffer.from([0])]
  for (let entry = 1; entry < count; entry++) entries.push(fixedPart(0o100644, 0xfff), Buffer.from([1, 0x61 + (entry % 26), 0]))
  return indexOf(4, count, entries)
}

/** A version-2 sparse index: `files` tracked files, then `sparse` directory entries (mode 040000, `dir/`) outside the cone. */
export function sparseIndex(files: readonly string[], sparse: readonly string[]): Buffer {
  const entries = [...files.map((path) => [0o100644, path] as const), ...sparse.map((path) => [0o040000, path] as const)]
    .toSorted(([, a], [, b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([mode, path]) => {
      const name = Buffer.from(path)
      const entry = Buffer.alloc((62 + name.length + 8) & ~7) // NUL-padded to a multiple of 8
      fixedPart(mode, Math.min(name.length, 0xfff)).copy(entry)
      name.copy(entry, 62)
      return entry
    })
  return indexOf(2, entries.length, entries)
}
