// Print every event of every session log under a DSH home as JSON lines.
// Usage (Node >= 22.15, for zlib's zstd): node scripts/read-sessions.mjs <DSH_HOME>
// A log is many zstd frames back to back and zstdDecompressSync decodes only the first, so
// the file is split on the frame magic (28 b5 2f fd) and each frame decoded on its own.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import zlib from 'node:zlib'

const MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd])

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* files(path)
    else yield path
  }
}

function decode(buffer) {
  if (!buffer.subarray(0, 4).equals(MAGIC)) return buffer.toString('utf8')
  if (typeof zlib.zstdDecompressSync !== 'function') throw new Error(`node ${process.version} has no zlib zstd — run this under Node >= 22.15`)
  const starts = []
  for (let i = buffer.indexOf(MAGIC); i !== -1; i = buffer.indexOf(MAGIC, i + 1)) starts.push(i)
  let text = ''
  // A magic inside compressed data is possible: a split that fails to decode is merged with the next.
  let from = starts[0]
  for (let k = 1; k <= starts.length; k++) {
    const end = k < starts.length ? starts[k] : buffer.length
    try {
      text += zlib.zstdDecompressSync(buffer.subarray(from, end)).toString('utf8')
      from = end
    } catch (error) {
      if (k === starts.length) throw error
    }
  }
  return text
}

const home = process.argv[2]
if (!home) {
  process.stderr.write('usage: node scripts/read-sessions.mjs <DSH_HOME>\n')
  process.exit(2)
}
for (const path of files(join(home, 'sessions'))) {
  for (const line of decode(readFileSync(path)).split('\n')) {
    if (line.trim() === '') continue
    process.stdout.write(JSON.stringify({ file: path, event: JSON.parse(line) }) + '\n')
  }
}
