// The hostile-workspace fixture the hardening specs list and read: nesting, hidden files, unicode, links, a loop.
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** A small workspace with the usual suspects: nesting, hidden files, unicode, links in and out, a loop. */
export async function makeFixture(root: string): Promise<void> {
  await mkdir(join(root, 'src/cli/deep/deeper'), { recursive: true })
  await mkdir(join(root, '.git'), { recursive: true })
  await mkdir(join(root, 'dossier é'), { recursive: true })
  await writeFile(join(root, 'src/index.ts'), 'export {}\n')
  await writeFile(join(root, 'src/cli/ui.ts'), 'x'.repeat(500))
  await writeFile(join(root, 'README.md'), '# hi\n')
  await writeFile(join(root, '.env'), 'SECRET=1\n')
  await writeFile(join(root, 'dossier é/文件.txt'), 'ü\n')
  await writeFile(join(root, 'no-newline.txt'), 'last line')
  await writeFile(join(root, 'empty.txt'), '')
  await symlink('src', join(root, 'link-in'))
  await symlink('/etc', join(root, 'link-out'))
  await symlink('..', join(root, 'src/cli/loop'))
  await symlink('missing', join(root, 'dangling'))
}

/** The compositions filesystem specs run on: the product's dsh-fs-sandbox first, then the bare dsh-fs-local. */
export const COMPOSITIONS = [['dsh-fs-sandbox', { sandbox: 'workspace-write' }], ['dsh-fs-local', {}]] as const
