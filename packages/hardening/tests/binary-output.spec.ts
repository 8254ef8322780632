/**
 * Issue 33, finding 15: binary foreground output came back as ~116 KB of U+FFFD with raw ESC, BEL and CR bytes. Now,
 * in both compositions, binary output is described (its size, that it is binary, that it was not kept) and text
 * output reaches the model with its control characters escaped as names are (`\x1b`), lines and tabs kept.
 */
import { describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { COMPOSITIONS, sharedHost } from '../src/compositions.ts'
import { withinMs } from '../src/budget.ts'
import { markChildren } from '../src/procs.ts'

type Stream = { text: string, cut: number, binary?: boolean }
type Value = { stdout: Stream, stderr: Stream, exit_code: number | null, world?: string }

const mark = markChildren('binout')
// oxlint-disable-next-line no-control-regex -- the point: no raw control but LF and tab reaches the model
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f\ufffd]/

describe.each(COMPOSITIONS)('foreground output that is not plain text, through $name', ({ boot, world }) => {
  const host = sharedHost(boot, mark)

  const run = async (command: string) => {
    const result = await withinMs(60_000, command, execTool(host().ctx, 'bash_bg', { command }))
    const value = result.value as Value
    expect(value.world).toBe(world)
    return { value, text: textOf(result) }
  }

  it('describes 120,000 random bytes (the issue\'s case) by size instead of dumping them', async () => {
    const { value, text } = await run('head -c 120000 /dev/urandom')
    expect(value.stdout).toEqual({ text: '', cut: 120_000, binary: true })
    expect(text).toBe('[stdout: 120000 bytes of binary output, not shown and not kept; redirect it to a file to keep it, then inspect that file (xxd, file)]')
  })

  it('describes binary stderr and still shows text stdout beside it', async () => {
    const { value, text } = await run('head -c 5000 /dev/urandom >&2; echo done; exit 3')
    expect(value.stderr).toEqual({ text: '', cut: 5000, binary: true })
    expect(text).toBe('done\n[stderr]\n[stderr: 5000 bytes of binary output, not shown and not kept; redirect it to a file to keep it, then inspect that file (xxd, file)]\n[exit code: 3]')
  })

  it('escapes ESC, BEL and a lone CR in text output; lines, tabs, CRLF ends and box drawing stay as they are', async () => {
    const { value, text } = await run("printf 'red \\033[31mRED\\033[0m bell\\a 10%%\\r50%%\\r\\nnext\\ttab\\r\\n├── a\\\\b\\n'")
    expect(value.stdout.binary).toBeUndefined()
    expect(text).toBe('red \\x1b[31mRED\\x1b[0m bell\\x07 10%\\x0d50%\nnext\ttab\n├── a\\\\b\n')
    expect(RAW_CONTROL.test(text)).toBe(false)
  })

  it('leaves ordinary text, backslashes included, exactly as printed', async () => {
    const { text } = await run("printf 'C:\\\\path\\n日本語 café\\n'")
    expect(text).toBe('C:\\path\n日本語 café\n')
  })
})
