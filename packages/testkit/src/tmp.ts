// Real temp directories for tests: made realpath'd, removed whole.
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh real directory under the OS temp dir (realpath'd, so macOS-style /tmp links never skew paths). */
export async function makeTmpDir(prefix = 'gencode-'): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)))
}

export async function removeTmpDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}
