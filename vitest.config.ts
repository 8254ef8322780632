import { configDefaults, defineConfig } from 'vitest/config'

/**
 * Packages whose spec files share one module graph per worker (isolate: false): each spec boots its own host and disposes
 * it, and none patches modules, the environment or process handlers. Loading the DSH host's modules again for every
 * file was about a fifth of the suite's time; the rest stay isolated (spies, TMPDIR, exit hooks).
 */
const SHARED = 'packages/{common,testkit,tool-list-dir,tool-read,playground}'

export default defineConfig({
  // Workspace packages that export a `source` condition (the test kit) run from their TypeScript
  // source in tests; plain Node (the main job) gets their built JS.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    setupFiles: ['packages/testkit/src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and real temp dirs: keep file-level parallelism modest on 2 cores.
    maxWorkers: 2,
    // Each project names its own files (a project's arrays are appended to the root's, never replace them).
    projects: [
      { extends: true, test: { name: 'shared', include: [`${SHARED}/tests/**/*.spec.ts`], isolate: false } },
      {
        extends: true,
        test: { name: 'isolated', include: ['packages/*/tests/**/*.spec.ts'], exclude: [...configDefaults.exclude, `${SHARED}/**`] },
      },
    ],
    // `npm test` runs with --coverage: what the published plugins ship, measured over the whole suite
    // (README "Gates" has the floors and today's figures).
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      exclude: [
        // Test support, not shipped.
        'packages/{testkit,playground,hardening}/**',
        // These run only on the PDF thread (a worker_thread), which v8 coverage of the test workers does not see.
        'packages/tool-read/src/formats/pdf/pdf-worker.ts',
        'packages/tool-read/src/formats/pdf/encrypt.ts',
        // Runs only on a wait_for matching thread (a worker_thread).
        'packages/tool-bash-bg/src/tool/match-worker.ts',
        // Run only in the keeper, a child process of the host (its specs judge it by the files and processes it leaves).
        'packages/tool-bash-bg/src/local/{keeper,kept-shell}.ts',
      ],
      reporter: ['text', 'json-summary'],
      reportsDirectory: '.tmp/coverage',
      thresholds: {
        // Each plugin's total, a unit or so under its figure when set (timing decides a few branches); a drop fails the run.
        'packages/tool-list-dir/src/**': { statements: 93, branches: 88, functions: 93, lines: 95 },
        'packages/tool-read/src/**': { statements: 95, branches: 87, functions: 96, lines: 97 },
        'packages/tool-bash-bg/src/**': { statements: 92, branches: 86, functions: 91, lines: 95 },
        'packages/common/src/**': { statements: 97, branches: 94, functions: 96, lines: 97 },
        'packages/tool-kill-shell/src/**': { statements: 96, branches: 91, functions: 91, lines: 96 },
        // Files covered completely stay so (a glob's total is 100 only when each file is).
        'packages/tool-*/src/{config,index}.ts': { 100: true },
        'packages/tool-bash-bg/src/{contract,tool/present,seam/world,shells/kill-policy,shells/world-types,shells/world}.ts': { 100: true },
        'packages/tool-kill-shell/src/value.ts': { 100: true },
        'packages/tool-list-dir/src/{errors,types}.ts': { 100: true },
        'packages/tool-read/src/{formats/pdf/sniff,formats/pdf/protocol,reader,value}.ts': { 100: true },
      },
    },
  },
})
