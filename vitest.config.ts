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
  },
})
