import { mkdir, rename, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bootHost, makeTmpDir, removeTmpDir, runTurn, textTurn, toolResults, toolTurn, type Host } from '@gencode-ai/testkit'
import * as ListDir from '../../tool-list-dir/src/index.ts'
import * as Read from '../../tool-read/src/index.ts'

/**
 * Crafted attempts to reach outside the workspace, through the agent loop, with the default
 * outsideWorkspace 'ask' and no approval service composed: every one must be refused — under the
 * product's dsh-fs-sandbox (workspace-write) and the bare dsh-fs-local alike.
 */
let host: Host
let ws: string
let outside: string
const SECRET = 'TOP-SECRET-CONTENT'

for (const [provider, composition] of [['dsh-fs-sandbox', { sandbox: 'workspace-write' }], ['dsh-fs-local', {}]] as const) {
  describe(provider, () => {
    beforeAll(async () => {
      ws = await makeTmpDir('ws-')
      host = await bootHost({ cwd: ws, ...composition })
      await host.ctx.plugin(ListDir, {})
      await host.ctx.plugin(Read, {})
      outside = await makeTmpDir('outside-')
      await mkdir(join(outside, 'sub'))
      await writeFile(join(outside, 'secret.txt'), SECRET)
      await writeFile(join(outside, 'sub/secret.txt'), SECRET)
      await mkdir(join(ws, 'inside'))
      await writeFile(join(ws, 'inside/ok.txt'), 'fine')
      await symlink(outside, join(ws, 'link-out'))
      await symlink('/etc', join(ws, 'link-etc'))
      await symlink(join(ws, 'hop2'), join(ws, 'hop1'))
      await symlink(outside, join(ws, 'hop2'))
      await symlink(`../${outside.split('/').at(-1)}`, join(ws, 'rel-out'))
      await symlink(join(outside, 'secret.txt'), join(ws, 'file-link'))
      await mkdir(join(ws, 'deep/er'), { recursive: true })
      await symlink('../../..', join(ws, 'deep/er/up'))
    })
    afterAll(async () => {
      await host.dispose()
      await removeTmpDir(ws)
      await removeTmpDir(outside)
    })

    async function call(name: string, args: unknown): Promise<{ isError: boolean, text: string }> {
      ;(host.adapter as unknown as { script: unknown[] }).script.push(toolTurn({ id: 'e1', name, args }), textTurn('done'))
      const [result] = toolResults(await runTurn(host.ctx, host.agent(ws)))
      return result!
    }

    const dirAttempts: [string, () => string][] = [
      ['absolute path', () => outside],
      ['../ chain to the root and back down', () => `${'../'.repeat(12)}${outside.slice(1)}`],
      ['parent of the workspace', () => '..'],
      ['dot segments through an inside dir', () => 'inside/../..'],
      ['symlink to an outside dir', () => 'link-out'],
      ['symlink to /etc', () => 'link-etc'],
      ['path under a symlinked parent', () => 'link-out/sub'],
      ['chain of symlinks', () => 'hop1'],
      ['relative symlink climbing out', () => 'rel-out'],
      ['double slashes', () => `//${outside.slice(1)}`],
      ['/proc/self/root', () => `/proc/self/root${outside}`],
      ['/', () => '/'],
    ]
    const fileAttempts: [string, () => string][] = [
      ['absolute path', () => join(outside, 'secret.txt')],
      ['../ chain', () => `${'../'.repeat(12)}${outside.slice(1)}/secret.txt`],
      ['symlinked file', () => 'file-link'],
      ['file under a symlinked dir', () => 'link-out/secret.txt'],
      ['file two links deep', () => 'hop1/sub/secret.txt'],
      ['/etc/passwd', () => '/etc/passwd'],
      ['/etc/passwd through a link', () => 'link-etc/passwd'],
      ['/proc/self/root', () => `/proc/self/root${outside}/secret.txt`],
      ['/proc/self/environ', () => '/proc/self/environ'],
      ['dot segments', () => `inside/../../${outside.split('/').at(-1)}/secret.txt`],
    ]

    describe('list_directory escapes', () => {
      for (const [label, path] of dirAttempts) {
        it(`refuses ${label}`, async () => {
          const result = await call('list_directory', { path: path() })
          expect(result.isError, result.text).toBe(true)
          expect(result.text).toContain('is outside the workspace')
          expect(result.text).not.toContain('secret.txt')
        })
      }

      it('a recursive walk never follows a symlink loop or a link out', async () => {
        const result = await call('list_directory', { path: '.', recursive: true, depth: 10 })
        expect(result.isError).toBe(false)
        expect(result.text).toContain('up -> ../../..')
        expect(result.text).toContain(`link-out -> ${outside}`)
        // Links are shown with their text, never walked: nothing of the outside is listed.
        expect(result.text).not.toMatch(/── (secret\.txt|passwd|sub\/)/)
      })
    })

    describe('read_file escapes', () => {
      for (const [label, path] of fileAttempts) {
        it(`refuses ${label}`, async () => {
          const result = await call('read_file', { file_path: path() })
          expect(result.isError, result.text).toBe(true)
          expect(result.text).toContain('outside the workspace')
          expect(result.text).not.toContain(SECRET)
          expect(result.text).not.toContain('root:')
        })
      }
    })

    describe('a path swapped for a symlink between the check and the use', () => {
      for (const [tool, args, swapped] of [
        ['list_directory', { path: 'swap-list' }, 'swap-list'],
        ['read_file', { file_path: 'swap-read/secret.txt' }, 'swap-read'],
      ] as const) {
        it(`${tool} refuses it`, async () => {
          await mkdir(join(ws, swapped), { recursive: true })
          await writeFile(join(ws, swapped, 'secret.txt'), 'harmless')
          // After the outside-workspace check (pre-execute) and before the tool body runs, the
          // directory is replaced by a symlink to the outside.
          const dispose = host.ctx.on('tools/execute', async (exec, next) => {
            if (exec.name === tool) {
              await rename(join(ws, swapped), join(ws, `${swapped}-old-${Date.now()}`))
              await symlink(outside, join(ws, swapped))
            }
            return next()
          })
          try {
            const result = await call(tool, args)
            expect(result.isError, result.text).toBe(true)
            expect(result.text).not.toContain(SECRET)
            expect(result.text).toContain('outside the workspace')
          } finally {
            dispose()
          }
        })
      }
    })
  })
}
