/**
 * The agent loop with a scripted model: start a server in the background, wait for its log
 * line, read the log with read_file (tool-read) — no approval prompt, because the shell log
 * directory counts as inside the workspace — while a file outside the workspace is refused.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { makeTmpDir, removeTmpDir, runTurn, textTurn, toolResults, toolTurn } from '@gencode-ai/testkit'
import * as ToolRead from '../../tool-read/src/index.ts'
import { bootBashBg, marker, pidsWithMarker, type BgHost } from './harness.ts'

let host: BgHost | undefined
const dirs: string[] = []
afterEach(async () => {
  await host?.dispose()
  host = undefined
  for (const dir of dirs.splice(0)) await removeTmpDir(dir)
})

/** The output_file the bash_bg result named, found in the request the model receives. */
function outputFile(request: GenerateOptions): string {
  const match = /Output file: ([^\s\\]+)/.exec(JSON.stringify(request.messages))
  if (match?.[1] === undefined) throw new Error('no output file in the conversation')
  return match[1]
}

it('starts a server in the background and reads its log with read_file, without an approval prompt', async () => {
  const outside = await makeTmpDir()
  dirs.push(outside)
  await writeFile(join(outside, 'secret.txt'), 'not yours')
  const mark = marker('server')
  host = await bootBashBg({}, {
    script: [
      toolTurn({ id: 't1', name: 'bash_bg', args: { command: `echo "server listening on 8080"; exec -a ${mark} sleep 60`, run_in_background: true, description: 'Start the dev server' } }),
      (request) => toolTurn({ id: 't2', name: 'bash_bg', args: { command: `until grep -q listening ${outputFile(request)}; do sleep 0.05; done`, timeout: 10000 } }),
      (request) => toolTurn(
        { id: 't3', name: 'read_file', args: { file_path: outputFile(request) } },
        { id: 't4', name: 'read_file', args: { file_path: join(outside, 'secret.txt') } },
      ),
      textTurn('the server is up'),
    ],
    before: async (h) => { await h.ctx.plugin(ToolRead, {}) },
  })
  const agent = host.agent()
  const results = toolResults(await runTurn(host.ctx, agent))
  expect(results.map((result) => [result.callId, result.isError])).toEqual([['t1', false], ['t2', false], ['t3', false], ['t4', true]])
  expect(results[0]?.text).toMatch(/^Started background shell bg-[a-z0-9]{6} \(pid \d+\)\.\nOutput file: /)
  // No host job here: new output is read with read_file from a line.
  expect(results[0]?.text).toContain('Read output with read_file (offset=<next line> for new lines only).')
  expect(results[2]?.text).toContain('server listening on 8080')
  expect(results[3]?.text).toContain('is outside the workspace')
  expect(pidsWithMarker(mark, true)).toHaveLength(1)
  expect(host.shells.running(agent.id)).toHaveLength(1)
  await host.dispose()
  host = undefined
  expect(pidsWithMarker(mark)).toEqual([])
})
