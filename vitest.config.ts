import { relative } from 'node:path'
import { configDefaults, defineConfig } from 'vitest/config'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The longest files, longest first (7–39 s each in a fresh clone's run, three workers, load average 5–6): started first,
 * they run beside the many short ones instead of after them. Vitest orders by its own cache of durations, which a fresh
 * clone lacks (it then orders files by size, and a long one could start last, alone on one worker).
 */
const LONGEST = [
  'packages/playground/tests/dsh-resume.spec.ts',
  'packages/playground/tests/dsh-cli.spec.ts',
  'packages/hardening/tests/swaps.spec.ts',
  'packages/hardening/tests/fuzz-bash-bg.spec.ts',
  'packages/tool-bash-bg/tests/watch.spec.ts',
  'packages/hardening/tests/wait-for-cost.spec.ts',
  'packages/tool-bash-bg/tests/keeper.spec.ts',
  'packages/tool-bash-bg/tests/installed.spec.ts',
  'packages/tool-bash-bg/tests/delivery-crash.spec.ts',
  'packages/hardening/tests/pdf-bomb.spec.ts',
  'packages/hardening/tests/hostile-git-index.spec.ts',
  'packages/tool-bash-bg/tests/world.spec.ts',
  'packages/hardening/tests/processes.spec.ts',
  'packages/hardening/tests/hostile-rules.spec.ts',
  'packages/hardening/tests/shutdown-kills.spec.ts',
  'packages/playground/tests/console.spec.ts',
  'packages/tool-bash-bg/tests/tool.spec.ts',
  'packages/hardening/tests/fuzz-kill-shell.spec.ts',
  'packages/tool-kill-shell/tests/jobs.spec.ts',
  'packages/tool-read/tests/bmp.spec.ts',
  'packages/tool-bash-bg/tests/moved.spec.ts',
  'packages/tool-kill-shell/tests/kill.spec.ts',
  'packages/hardening/tests/hostile-load.spec.ts',
  'packages/hardening/tests/foreground-shutdown.spec.ts',
]

/**
 * Files that assert a fact of their whole process (its peak RSS, `resourceUsage().maxRSS`): each runs in a fresh worker,
 * as a worker shared with other files carries their peaks.
 */
const OWN_PROCESS = ['packages/hardening/tests/hostile-list-dir.spec.ts']

/** A file's place in LONGEST; every other file after them. */
function rank(spec: TestSpecification): number {
  const at = LONGEST.indexOf(relative(spec.project.config.root, spec.moduleId))
  return at === -1 ? LONGEST.length : at
}

/** Vitest's order, but the files of LONGEST first. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Array#sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  // Workspace packages that export a `source` condition (the test kit) run from their TypeScript
  // source in tests; plain Node (the main job) gets their built JS.
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    setupFiles: ['packages/testkit/src/polyfill.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Real processes and real temp dirs, on 2 cores: two workers more than cores, as many files mostly wait (on shells'
    // timeouts, kills, sleeps, child hosts) while the others need the CPU. A fresh clone's `npm test`, idle machine: three
    // workers 198 s of vitest (1.7 cores busy), four 156 s.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
    // The spec files share one module graph per worker: each boots its own hosts and disposes them, and restores what it
    // changes (a spy on a host's object; TMPDIR, PATH, DSH_HOME or a tracking mode set for its own hosts; hardening's
    // process marker is each file's own, set as it loads); no plugin module holds state (tool-bash-bg's rooms spec).
    // Loading the DSH host's modules again for every file was about a fifth of the suite's time. Measured back to back
    // (`npx vitest run <package> --isolate=<true|false>`, load 5–9), isolated → shared: hardening 142.8 → 86.5 s, CPU
    // 147.8 → 141.5 s; tool-bash-bg 85.9 → 74.7 s, CPU 67.5 → 50.7 s; tool-kill-shell 27.4 → 22.6 s, CPU 25.5 → 20.3 s.
    // (An earlier run, when worker threads and the keeper still loaded through tsx, had shared hardening files running
    // up to twice as long.)
    // Each project names its own files (a project's arrays are appended to the root's, never replace them).
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['packages/*/tests/**/*.spec.ts'], exclude: [...configDefaults.exclude, ...OWN_PROCESS], isolate: false },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
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
