/**
 * read_file and list_directory name each other by their configured names (a user may rename either), found in the
 * host's tool registry; without the other plugin, by its default name.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { bootHost, execTool, textOf, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import { Read } from './harness.ts'

let host: Host | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

it('each points to the other by the name its config gives', async () => {
  host = await bootHost()
  await host.ctx.plugin(Read, { toolName: 'view_file' })
  await host.ctx.plugin(ListDir, { toolName: 'ls' })
  await mkdir(join(host.cwd, 'dir'))
  await writeFile(join(host.cwd, 'file.txt'), 'x\n')
  expect(textOf(await execTool(host.ctx, 'view_file', { file_path: 'dir' }))).toBe(`Error: cannot read "${join(host.cwd, 'dir')}": it is a directory — use ls to see what is in it`)
  expect(textOf(await execTool(host.ctx, 'view_file', { file_path: 'nothing-like-it' }))).toBe(`Error: cannot read "${join(host.cwd, 'nothing-like-it')}": file not found — use ls to see what is in "${host.cwd}"`)
  expect(textOf(await execTool(host.ctx, 'ls', { path: 'file.txt' }))).toBe(`Error: path "file.txt" is a file, not a directory (${join(host.cwd, 'file.txt')}) — use view_file to read it`)
})

it('without list_directory composed, read_file names it by its default name', async () => {
  host = await bootHost()
  await host.ctx.plugin(Read, {})
  await mkdir(join(host.cwd, 'dir'))
  expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'dir' }))).toBe(`Error: cannot read "${join(host.cwd, 'dir')}": it is a directory — use list_directory to see what is in it`)
})
