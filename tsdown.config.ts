// The plugins' build: one ES-module bundle per published package, the private shared package inlined.
import { fileURLToPath } from 'node:url'
import { defineConfig, type UserConfig } from 'tsdown'

/**
 * Each plugin's entries: the index, and any file a worker thread or a child process loads by path (read_file's PDF
 * parser, bash_bg's matcher and its keeper), each built to `dist/<name>.js` beside the index (named where the source
 * sits in a subfolder).
 */
const PLUGINS: Record<string, string[] | Record<string, string>> = {
  'tool-list-dir': ['src/index.ts'],
  'tool-read': { 'index': 'src/index.ts', 'pdf-worker': 'src/formats/pdf/pdf-worker.ts' },
  'tool-bash-bg': { 'index': 'src/index.ts', 'match-worker': 'src/tool/match-worker.ts', 'keeper': 'src/local/keeper.ts' },
  'tool-kill-shell': ['src/index.ts'],
}

const plugin = ([dir, entry]: [string, string[] | Record<string, string>]): UserConfig => ({
  name: `@gencode-ai/dsh-${dir}`,
  cwd: fileURLToPath(new URL(`packages/${dir}/`, import.meta.url)),
  entry,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outDir: 'dist',
  // Code the index and a worker share goes to one chunk beside them.
  outputOptions: { chunkFileNames: 'shared.js' },
  clean: true,
  // The private package is bundled (it is never published); everything the package.json declares
  // (runtime dependencies, the DSH peers) stays an import, and node builtins stay imports.
  deps: { alwaysBundle: [/^@gencode-ai\/dsh-tool-common$/] },
  // Bundle the shared package from its TypeScript source, as the tests run it.
  inputOptions: { resolve: { conditionNames: ['source', 'import', 'node', 'default'] } },
  tsconfig: fileURLToPath(new URL(`packages/${dir}/tsconfig.json`, import.meta.url)),
  dts: true,
  // Bundle-only code paths: what runs from TypeScript source only (a tsx-loaded worker) is dropped.
  define: { 'import.meta.dshBundle': 'true' },
  sourcemap: false,
  hash: false,
  fixedExtension: false,
  checks: { pluginTimings: false },
  report: false,
})

export default defineConfig(Object.entries(PLUGINS).map(plugin))
