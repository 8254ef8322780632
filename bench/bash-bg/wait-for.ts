/**
 * bench/bash-bg wait-for: issue 33's costly wait_for (37 characters, ~0.3–1 s per 4 KB line of word characters in
 * re2js) against 100 such lines written in one burst, beside a cheap pattern in the same run. Reported: the event
 * loop's worst lateness during the call (a 10 ms timer), and the wait's length as a ratio of its timeout. The built
 * plugin on the real host services, run as one host per pattern.
 *   npx tsx bench/bash-bg/wait-for.ts [lines] [timeoutMs]
 */
import '../../packages/testkit/src/polyfill.ts'
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { bootHost, execTool, loopLateness } from '@gencode-ai/testkit'
import * as BashBg from '../../packages/tool-bash-bg/dist/index.js'

const lines = Number(process.argv[2] ?? 100)
const timeoutMs = Number(process.argv[3] ?? 15_000)
const COSTLY = '(\\w{1,999}|\\d{1,999}|[a-z]{1,999})+\\s'
const CHEAP = 'listening on port \\d+'
const command = `yes "$(head -c 4096 /dev/zero | tr '\\0' a)" | head -n ${lines}; sleep 600`

async function measure(pattern: string): Promise<{ lateMs: number, waitMs: number, wait: unknown }> {
  const host = await bootHost()
  await host.ctx.plugin(BashBg, {})
  const start = performance.now()
  const { result, worstMs: lateMs } = await loopLateness(
    execTool(host.ctx, 'bash_bg', { command, run_in_background: true, wait_for: pattern, timeout: timeoutMs }),
  )
  const waitMs = performance.now() - start
  await host.dispose()
  return { lateMs, waitMs, wait: (result.value as { wait?: unknown } | undefined)?.wait }
}

console.log(`wait_for over ${lines} lines of 4,096 word characters, timeout ${timeoutMs} ms (load ${loadavg()[0]?.toFixed(1)})`)
for (const [label, pattern] of [['cheap', CHEAP], ['costly (issue 33)', COSTLY]] as const) {
  const { lateMs, waitMs, wait } = await measure(pattern)
  const ratio = (waitMs / timeoutMs).toFixed(3)
  console.log(`${label.padEnd(20)} wait ${String(wait).padEnd(8)} worst loop lateness ${lateMs.toFixed(0).padStart(6)} ms   wait / timeout ${ratio}×`)
}
process.exit(0)
