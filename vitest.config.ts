import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Workspace packages that export a `source` condition (the test kit) run from their TypeScript
  // source in tests; plain Node (the main job) gets their built JS.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['packages/*/tests/**/*.spec.ts'],
    setupFiles: ['packages/testkit/src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and real temp dirs: keep file-level parallelism modest on 2 cores.
    maxWorkers: 2,
    // `npm test` runs with --coverage: the published plugins' source, measured over the whole suite.
    coverage: {
      provider: 'v8',
      include: ['packages/tool-{list-dir,read,bash-bg,kill-shell}/src/**/*.ts'],
      exclude: [
        // These run only on the PDF thread (a worker_thread), which v8 coverage of the test workers does not see.
        'packages/tool-read/src/pdf-worker.ts',
        'packages/tool-read/src/pdf-encrypt.ts',
      ],
      reporter: ['text', 'json-summary'],
      reportsDirectory: '.tmp/coverage',
    },
  },
})
