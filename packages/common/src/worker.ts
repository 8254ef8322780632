// A plugin's worker thread, started from its bundle or, in tests, from its TypeScript source.
import { Worker, type WorkerOptions } from 'node:worker_threads'
import { sourceEntry } from './source-entry.ts'

declare global {
  interface ImportMeta {
    /** true in a published bundle (the build defines it), which holds each worker as `<name>.js` beside itself. */
    dshBundle?: boolean
  }
}

/** The worker `name` beside the module at `here` (its import.meta.url): `<name>.js` in a bundle, `<name>.ts` bundled in source. */
export function startWorker(here: string, name: string, options: WorkerOptions): Worker {
  if (import.meta.dshBundle === true || !here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), options)
  // From the TypeScript source (tests run it so): the thread loads the source's bundle (the build drops this branch).
  return new Worker(sourceEntry(here, name), options)
}
