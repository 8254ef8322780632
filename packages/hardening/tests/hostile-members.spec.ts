/**
 * Processes that wipe what marks them: daemons that rewrite their title (their environment with it), `env -i`
 * escapees and foreground `setsid` servers, in batches, stopped with kill_shell or as a foreground run's leftovers.
 * They are found in /proc by title (their environment no longer carries any marker), and none may be left.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import { newShellCgroup } from '../../tool-bash-bg/tests/harness.ts'
import * as KillShell from '../../tool-kill-shell/src/index.ts'
import { LONG_TEST_MS, runs, withinMs } from '../src/budget.ts'
import { until } from '../src/procs.ts'

const title = `htitle_${process.pid}_${Math.random().toString(36).slice(2, 8)}`

/** Live pids whose command line names `title` (what a process shows after it renamed itself). */
function titled(): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1')
      const state = stat.slice(stat.lastIndexOf(')') + 2)[0]
      if (state !== 'Z' && readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes(title)) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

const daemon = (n: number) => `setsid perl -e '$0 = "${title}_d${n}" . (" " x 4000); sleep 30' </dev/null >/dev/null 2>&1 &`
const escapee = (n: number) => `env -i setsid bash -c 'exec -a ${title}_e${n} sleep 30' </dev/null >/dev/null 2>&1 &`

const probe = newShellCgroup()
probe?.remove()

describe.skipIf(probe === undefined)('hostile members (skipped: no cgroup can be made here, so env -i escapees are unseen by design)', () => {
  let host: Host
  beforeAll(async () => {
    host = await bootHost()
    await host.ctx.plugin(BashBg, { maxEntries: 10 })
    await host.ctx.plugin(KillShell, { timeoutMs: 200 })
  })
  afterAll(async () => { await host.dispose() })

  it(`${runs(100, 20)} shells of title-rewriting daemons and env -i escapees, stopped by kill_shell, and foreground setsid servers: 0 left`, async () => {
    const total = runs(100, 20)
    for (let done = 0; done < total; done += 10) {
      const ids: string[] = []
      for (let i = done; i < Math.min(total, done + 10); i++) {
        const result = await execTool(host.ctx, 'bash_bg', { command: `${daemon(i)} ${escapee(i)} exec sleep 30`, run_in_background: true })
        if (result.isError) throw new Error(textOf(result))
        ids.push((result.value as { shell_id: string }).shell_id)
      }
      await until(() => titled().length >= ids.length * 2, 'every daemon and escapee')
      for (const shell_id of ids) {
        const result = await withinMs(30_000, 'kill_shell', execTool(host.ctx, 'kill_shell', { shell_id }))
        expect(result.value).toMatchObject({ success: true, tracking: 'cgroup' })
      }
      expect(titled()).toEqual([])
      const fg = await withinMs(30_000, 'a foreground run', execTool(host.ctx, 'bash_bg', { command: `${daemon(done)} ${escapee(done)} echo ok` }))
      expect(fg.value).toMatchObject({ exit_code: 0, leftovers_stopped: 2, output_held_open: false })
      expect(titled()).toEqual([])
    }
  }, LONG_TEST_MS)
})
