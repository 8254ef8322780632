// A worker's or child process's entry run from the TypeScript source (tests): one ES module bundled by esbuild, reused
// while its inputs keep their bytes. Loaded through tsx instead, each thread or process paid about 0.25 s of CPU
// (tsx, a loader-hooks thread, the transforms) before its first line; the bundle loads in about 0.05 s.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The part of esbuild's API used here (esbuild is tsx's, resolved from it: no dependency of this package). */
interface Esbuild {
  buildSync(options: Record<string, unknown>): { outputFiles: { text: string }[], metafile: { inputs: Record<string, unknown> } }
  stop(): Promise<void>
}

/** What the cache keeps of one entry: the bundle's file, and the hash of each input it was built from. */
interface Built { file: string, inputs: Record<string, string> }

const sha1 = (bytes: Buffer | string): string => createHash('sha1').update(bytes).digest('hex')

/** The directory holding the nearest package.json at or above `dir`. */
function packageDir(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at
    if (dirname(at) === at) throw new Error(`no package.json at or above ${dir}`)
  }
}

/** `built` while every input still has the bytes it had then. */
function current(record: string): string | undefined {
  try {
    const built = JSON.parse(readFileSync(record, 'utf8')) as Built
    const fresh = existsSync(built.file) && Object.entries(built.inputs).every(([file, hash]) => sha1(readFileSync(file)) === hash)
    return fresh ? built.file : undefined
  } catch {
    return undefined
  }
}

/** Write by rename: a process reading at the same time sees the old file or the new one, never half of one. */
function writeWhole(file: string, text: string): void {
  const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`
  writeFileSync(partial, text)
  renameSync(partial, file)
}

/**
 * The path of `<name>.ts` beside the module at `here`, bundled: its relative imports and this package inlined, other
 * packages left imports. The bundle sits in the entry's package (`node_modules/.cache`), so it resolves those imports as
 * the source does.
 */
export function sourceEntry(here: string, name: string): string {
  const entry = fileURLToPath(new URL(`./${name}.ts`, here))
  const pkg = packageDir(dirname(entry))
  const cache = join(pkg, 'node_modules', '.cache', 'source-entries')
  const record = join(cache, `${relative(pkg, entry).replaceAll('/', '+')}.json`)
  const cached = current(record)
  if (cached !== undefined) return cached
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx'))('esbuild') as Esbuild
  let built: ReturnType<Esbuild['buildSync']>
  try {
    built = esbuild.buildSync({
      entryPoints: [entry], bundle: true, write: false, metafile: true, format: 'esm', platform: 'node', target: 'node20',
      packages: 'external', alias: { '@gencode-ai/dsh-tool-common': fileURLToPath(new URL('./index.ts', import.meta.url)) },
      absWorkingDir: pkg, logLevel: 'silent',
    })
  } finally {
    // esbuild keeps its service process for the next call, with this process's environment: a spec that looks for
    // processes carrying its marker would find it. Builds are rare (the cache), so each stops it.
    void esbuild.stop()
  }
  const { outputFiles, metafile } = built
  const text = outputFiles.map((output) => output.text).join('')
  mkdirSync(cache, { recursive: true })
  const file = join(cache, `${name}-${sha1(text).slice(0, 16)}.mjs`)
  writeWhole(file, text)
  const inputs = Object.fromEntries(Object.keys(metafile.inputs).map((input) => {
    const path = join(pkg, input)
    return [path, sha1(readFileSync(path))]
  }))
  writeWhole(record, JSON.stringify({ file, inputs } satisfies Built))
  return file
}
