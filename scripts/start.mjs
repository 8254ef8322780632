// The main job (the root README's "Two commands"). `npm start` runs setup (install + build) first, then this.
// With DEEPSEEK_API_KEY: the real dsh CLI, with the four plugins installed in a profile.
// Without: the tool console on the real DSH services.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
// npm runs scripts from the package root; INIT_CWD is where the user typed npm start.
const cwd = process.env.INIT_CWD ?? process.cwd()
const argv = process.argv.slice(2)

if (process.env.DEEPSEEK_API_KEY) {
  const { launchDsh } = await import('../packages/playground/dist/dsh-cli.js')
  process.exitCode = await launchDsh(argv, { root, cwd })
} else {
  const { runConsole } = await import('../packages/playground/dist/index.js')
  process.exitCode = await runConsole(argv, { root, cwd, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr })
}
