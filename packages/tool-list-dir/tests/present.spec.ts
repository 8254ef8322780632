import { describe, expect, it } from 'vitest'
import { presentCall, presentResult } from '../src/tool.ts'

describe('UI card', () => {
  it('the pending title names the mode', () => {
    expect(presentCall({ path: 'src' }).title).toBe('List src')
    expect(presentCall({ path: 'src', recursive: true, depth: 2 }).title).toBe('List src (tree, depth 2)')
    expect(presentCall({ path: '.', recursive: true, all: true, offset: 100, pattern: '*.ts' }).title).toBe('List . (tree, *.ts, all, from 100)')
    expect(presentCall({ path: '.', offset: 0 }).title).toBe('List .')
  })

  it('the completed card carries the model text; an error falls back to the generic card', () => {
    const content = [{ type: 'text' as const, text: 'Listed 1 item' }]
    expect(presentResult({ path: 'src' }, { content, isError: false })).toEqual({ card: 'generic', title: 'Listed src', content })
    expect(presentResult({ path: 'src' }, { content, isError: true })).toBeUndefined()
  })
})
