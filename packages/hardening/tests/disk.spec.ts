/**
 * Disk: a background shell that writes far more than maxLogBytes. The log must stop at the cap
 * (the marker included), the shell must still run to its end (the pipe is drained, never
 * blocked), and capture stopping must be reported: on the record, as the host job's outcome,
 * and in the log itself, which the model reads with read_file.
 */
import { readFileSync, statSync } from 'node:fs'
import * as ToolJobs from '@deepseek-ai/dsh-tool-jobs'
import { JobId } from '@deepseek-ai/dsh-jobs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as BashBg from '../../tool-bash-bg/src/index.ts'
import type { ShellRegistry } from '../../tool-bash-bg/src/shells/registry.ts'
import * as Read from '../../tool-read/src/index.ts'
import { LONG_TEST_MS, STRESS, runs, withinMs } from '../src/budget.ts'
import { markChildren, markedPids } from '../src/procs.ts'

const GiB = 1024 ** 3
const MiB = 1024 ** 2
const WRITE = runs(10 * GiB, 1 * GiB)
const CAP = runs(64 * MiB, 8 * MiB)

const mark = markChildren('disk')
let host: Host
beforeAll(async () => {
  host = await bootHost()
  await host.ctx.plugin(ToolJobs, {})
  await host.ctx.plugin(BashBg, { maxLogBytes: CAP })
  await host.ctx.plugin(Read, {})
})
afterAll(async () => { await host.dispose() })

it(`a shell writing ${WRITE / GiB} GiB with maxLogBytes ${CAP / MiB} MiB: the log stops at the cap, the shell runs to its end, capture stopping is reported`, async () => {
  const agent = host.agent()
  const shells = host.ctx.get('backgroundShells') as ShellRegistry
  // `yes` is text, so the model's read of the log works. The pipeline's exit code is head's: 0
  // means head wrote every byte (a writer blocked at the cap would never end; one whose pipe was
  // closed would die of SIGPIPE, 141).
  const started = await execTool(host.ctx, 'bash_bg', { command: `yes | head -c ${WRITE}`, run_in_background: true }, { agent })
  expect(started.isError, textOf(started)).toBe(false)
  const { shell_id, output_file, job_id } = started.value as { shell_id: string, output_file: string, job_id?: string }
  const record = await withinMs(STRESS ? 600_000 : 120_000, 'the writer to finish', shells.settled(shell_id))

  // The disk: never more than the cap, the marker included.
  const size = statSync(output_file).size
  expect(size).toBeLessThanOrEqual(CAP)
  expect(record).toMatchObject({ status: 'completed', exit_code: 0, capped: true, bytes: size })
  const marker = `\n[bash_bg: log capped at ${CAP} bytes; later output was discarded]\n`
  const tail = readFileSync(output_file, 'latin1').slice(-marker.length)
  expect(tail).toBe(marker)
  // The writer was drained to its end, not blocked at the cap: the shell completed on its own.
  expect(markedPids(mark)).toEqual([])

  // The host job's outcome says so.
  expect(job_id).toBeDefined()
  const job = host.ctx.jobs.get(JobId(job_id!), agent)
  expect(job.detail).toBe(`exit code: 0; log capped at ${size} bytes`)

  // And the model, reading the end of the log with read_file, sees the marker.
  const lines = readFileSync(output_file, 'latin1').split('\n').length
  const read = await execTool(host.ctx, 'read_file', { file_path: output_file, offset: lines - 3 }, { agent })
  expect(read.isError, textOf(read)).toBe(false)
  expect(textOf(read)).toContain(`[bash_bg: log capped at ${CAP} bytes; later output was discarded]`)
  console.log(`disk: wrote ${WRITE} bytes through a ${CAP}-byte cap; log ${size} bytes (${CAP - size} under the cap), capped reported on the record, the job and in the log`)
}, LONG_TEST_MS)
