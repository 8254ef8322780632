/**
 * bench/list-dir: the first list_directory calls of a freshly booted product host (dsh-sandbox-policy workspace-write
 * + dsh-fs-sandbox, the built plugin), made by an agent, in plain Node on built JS as the dsh CLI runs them (no tsx:
 * its loader thread compiles what a first call imports, which no user pays). Prints each call's wall time in ms.
 *   node bench/list-dir/first-calls.mjs <workspace> <path> [calls]
 */
import '../../packages/testkit/dist/polyfill.js'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/dist/index.js'

const [cwd, path, calls = '5'] = process.argv.slice(2)
const host = await bootHost({ cwd, sandbox: 'workspace-write' })
await host.ctx.plugin(ListDir, {})
const agent = host.agent(cwd)
const times = []
for (let call = 0; call < Number(calls); call++) {
  const start = performance.now()
  const result = await execTool(host.ctx, 'list_directory', { path, recursive: true, depth: 3 }, { agent })
  times.push(performance.now() - start)
  if (result.isError) throw new Error(JSON.stringify(result.error))
}
console.log(JSON.stringify(times))
await host.dispose()
