// A plugin's entries beside it (a worker thread, a child process), started from its bundle or, in tests, from its
// TypeScript source.
import { fileURLToPath } from 'node:url'
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { sourceEntry } from './source-entry.ts'

declare global {
  interface ImportMeta {
    /** true in a published bundle (the build defines it), which holds each entry as `<name>.js` beside itself. */
    dshBundle?: boolean
  }
}

/** The file of entry `name` beside the module at `here` (its import.meta.url): `<name>.js` in a bundle, `<name>.ts` bundled in source. */
export function entryFile(here: string, name: string): string {
  if (import.meta.dshBundle === true || !here.endsWith('.ts')) return fileURLToPath(new URL(`./${name}.js`, here))
  // From the TypeScript source (tests run it so): the source's bundle (the build drops this branch).
  return sourceEntry(here, name)
}

/** The worker `name` beside the module at `here`. */
export function startWorker(here: string, name: string, options: WorkerOptions): Worker {
  return new Worker(entryFile(here, name), options)
}
