/**
 * bench/list-dir: the first list_directory call of a freshly booted product host (dsh-sandbox-policy
 * workspace-write + dsh-fs-sandbox, the built plugin), made by an agent; prints its wall time in ms.
 *   npx tsx bench/list-dir/first-call.ts <workspace> <path>
 */
import '../../packages/testkit/src/polyfill.ts'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool } from '@gencode-ai/testkit'
import * as ListDir from '../../packages/tool-list-dir/dist/index.js'

const [cwd, path] = process.argv.slice(2) as [string, string]
const host = await bootHost({ cwd, sandbox: 'workspace-write' })
await host.ctx.plugin(ListDir, {})
const agent = host.agent(cwd)
const start = performance.now()
const result = await execTool(host.ctx, 'list_directory', { path, recursive: true, depth: 3 }, { agent })
const elapsed = performance.now() - start
if (result.isError) throw new Error(JSON.stringify(result.error))
console.log(elapsed.toFixed(1))
await host.dispose()
