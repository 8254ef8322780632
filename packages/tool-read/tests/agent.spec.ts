/**
 * Through the real agent loop, with the real dsh-tool-fs and dsh-fs-observation-policy: an edit
 * of a file the model has not read is refused (the control), and right after our read_file the
 * same edit is accepted; a legacy-encoded file read is not observed, so the edit that would
 * rewrite it as UTF-8 stays refused. Verified on disk.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { afterEach, expect, it } from 'vitest'
import * as ToolFs from '@deepseek-ai/dsh-tool-fs'
import * as ObservationPolicy from '@deepseek-ai/dsh-fs-observation-policy'
import { runTurn, textTurn, toolResults, toolTurn, type Host } from '@gencode-ai/testkit'
import { makePdf, readHost } from './harness.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

it('an edit after read_file is accepted; without the read it is refused', async () => {
  host = await readHost({}, {
    script: [
      toolTurn({ id: 'e1', name: 'edit', args: { file_path: 'notes.txt', old_string: 'draft', new_string: 'final' } }),
      toolTurn({ id: 'r1', name: 'read_file', args: { file_path: 'notes.txt' } }),
      toolTurn({ id: 'e2', name: 'edit', args: { file_path: 'notes.txt', old_string: 'draft', new_string: 'final' } }),
      textTurn('done'),
    ],
  })
  await host.ctx.plugin(ObservationPolicy)
  await host.ctx.plugin(ToolFs, {})
  const path = join(host.cwd, 'notes.txt')
  await writeFile(path, 'a draft note\n')
  const events = await runTurn(host.ctx, host.agent())
  const [refused, read, edited] = toolResults(events)
  expect(refused?.isError).toBe(true)
  expect(refused?.text).toBe(`Error: edit requires reading "${path}" first — read the file, then retry`)
  expect(read).toEqual({ callId: 'r1', isError: false, text: '1\ta draft note' })
  expect(edited?.isError, edited?.text).toBe(false)
  expect(await readFile(path, 'utf8')).toBe('a final note\n')
  // The model saw our tool beside the first-party ones, with its guidance in the system prompt.
  const request = host.adapter.requests[0]!
  expect(request.tools?.map((tool) => tool.name)).toEqual(expect.arrayContaining(['read_file', 'read', 'edit']))
  expect(JSON.stringify(request.system ?? request)).toContain('Use read_file, not cat/head/tail')
})

it('through the agent loop: a GBK file and a PDF are read; an edit of the GBK file is refused, its bytes untouched', async () => {
  host = await readHost({}, {
    script: [
      toolTurn({ id: 'g', name: 'read_file', args: { file_path: 'legacy.c' } }),
      toolTurn({ id: 'p', name: 'read_file', args: { file_path: 'spec.pdf', pages: '2' } }),
      toolTurn({ id: 'e', name: 'edit', args: { file_path: 'legacy.c', old_string: '注释', new_string: '说明' } }),
      textTurn('done'),
    ],
  })
  await host.ctx.plugin(ObservationPolicy)
  await host.ctx.plugin(ToolFs, {})
  // Enough Chinese for a sure detection (a few characters are only a guess).
  const gbk = iconv.encode('// 中文注释：这个程序用于测试编码检测的功能\nint main(void) { return 0; }\n', 'gbk')
  await writeFile(join(host.cwd, 'legacy.c'), gbk)
  await writeFile(join(host.cwd, 'spec.pdf'), await makePdf(3))
  const [legacy, pdf, edit] = toolResults(await runTurn(host.ctx, host.agent()))
  expect(legacy).toEqual({
    callId: 'g',
    isError: false,
    text: '1\t// 中文注释：这个程序用于测试编码检测的功能\n2\tint main(void) { return 0; }\n\n(Decoded from GB18030. Edits must keep this encoding: edit/write would save UTF-8.)',
  })
  expect(pdf).toEqual({ callId: 'p', isError: false, text: '--- Page 2 ---\nPage 2 text\nsecond line\n\n(Showing pages 2 of 3. Use pages="3" to continue.)' })
  expect(edit?.isError).toBe(true)
  expect(await readFile(join(host.cwd, 'legacy.c'))).toEqual(gbk)
})
