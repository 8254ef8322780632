import { describe, expect, it } from 'vitest'
import { presentCall, presentResult } from '../src/tool/present.ts'

const text = (value: string) => [{ type: 'text' as const, text: value }]

describe('UI cards', () => {
  it('a foreground call is a terminal card with the command as title and the description', () => {
    expect(presentCall({ command: 'npm test', description: 'run the tests' })).toEqual({ card: 'terminal', title: 'npm test', description: 'run the tests' })
    expect(presentCall({ command: 'ls' })).toEqual({ card: 'terminal', title: 'ls' })
  })

  it('a background call is a generic execute card carrying the description', () => {
    expect(presentCall({ command: 'npm run dev', description: 'start the dev server', run_in_background: true })).toEqual({
      card: 'generic', title: 'npm run dev', kind: 'execute', rawInput: 'npm run dev', content: text('start the dev server'),
    })
    expect(presentCall({ command: 'npm run dev', run_in_background: true })).toEqual({ card: 'generic', title: 'npm run dev', kind: 'execute', rawInput: 'npm run dev' })
  })

  it('a foreground result is a terminal with the exit pill (exit code, or signal)', () => {
    expect(presentResult({ command: 'false' }, { content: text('oops\n[exit code: 1]'), isError: false, meta: { exit_code: 1, signal: null } }))
      .toEqual({ card: 'terminal', output: 'oops\n[exit code: 1]', exitCode: 1 })
    expect(presentResult({ command: 'sleep 9' }, { content: text('(no output)'), isError: false, meta: { exit_code: null, signal: 'SIGTERM' } }))
      .toEqual({ card: 'terminal', output: '(no output)', signal: 'SIGTERM' })
  })

  it('a background start, an error, or a result without exit facts is a console block', () => {
    const started = 'Started background shell bg-abc123 (pid 42).\nOutput file: /tmp/x.log\n'
    expect(presentResult({ command: 'x', run_in_background: true }, { content: text(started), isError: false, meta: { shell_id: 'bg-abc123' } }))
      .toEqual({ card: 'generic', content: text('```console\nStarted background shell bg-abc123 (pid 42).\nOutput file: /tmp/x.log\n```') })
    expect(presentResult({ command: 'x' }, { content: text('invalid command'), isError: true }))
      .toEqual({ card: 'generic', content: text('```console\ninvalid command\n```') })
  })

  it('leaves a result that is not one text block to the host', () => {
    expect(presentResult({ command: 'x' }, { content: [], isError: false })).toBeUndefined()
    expect(presentResult({ command: 'x' }, { content: [...text('a'), ...text('b')], isError: false })).toBeUndefined()
  })
})
