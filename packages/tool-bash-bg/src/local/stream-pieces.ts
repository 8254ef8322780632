// Where each stream's bytes lie in a log of both (kept for host 0.1.7, which reads each stream as its own source).
/** Which of the command's streams a piece came from (log-writer.ts's StreamName, by shape). */
type StreamName = 'stdout' | 'stderr'

/** Per stream, runs of [log offset, stream offset, length], in order (adjacent pieces joined). */
export class StreamPieces {
  private readonly runs: Record<StreamName, number[]> = { stdout: [], stderr: [] }
  private readonly streamBytes = { stdout: 0, stderr: 0 }

  /** A piece of `length` bytes of `stream` written at `logOffset`. */
  note(stream: StreamName, logOffset: number, length: number): void {
    const runs = this.runs[stream]
    const last = runs.length - 3
    if (last >= 0 && (runs[last] ?? 0) + (runs[last + 2] ?? 0) === logOffset) runs[last + 2] = (runs[last + 2] ?? 0) + length
    else runs.push(logOffset, this.streamBytes[stream], length)
    this.streamBytes[stream] += length
  }

  /** Where `stream`'s bytes from `from` (its own offset), at most `limit`, lie in the log. */
  pieces(stream: StreamName, from: number, limit: number): { at: number, length: number }[] {
    const runs = this.runs[stream]
    const out: { at: number, length: number }[] = []
    let position = from
    let want = limit
    for (let i = 0; i + 2 < runs.length && want > 0; i += 3) {
      const [at = 0, start = 0, length = 0] = runs.slice(i, i + 3)
      if (start + length <= position) continue
      const take = Math.min(length - (position - start), want)
      out.push({ at: at + position - start, length: take })
      position += take
      want -= take
    }
    return out
  }
}
