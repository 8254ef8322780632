import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

let host: Host
beforeAll(async () => { host = await readHost() })
afterAll(async () => { await host.dispose() })

const notebook = {
  nbformat: 4,
  nbformat_minor: 5,
  metadata: { kernelspec: { name: 'python3', language: 'python', display_name: 'Python 3' } },
  cells: [
    { cell_type: 'markdown', metadata: {}, source: ['# Data Analysis\n', 'This notebook analyzes the sales data.'] },
    { cell_type: 'code', execution_count: 1, metadata: {}, source: 'import pandas as pd\n', outputs: [] },
    {
      cell_type: 'code', execution_count: 2, metadata: {}, source: ['print("hi")\n', 'df.head()'],
      outputs: [
        { output_type: 'stream', name: 'stdout', text: ['hi\n'] },
        { output_type: 'execute_result', execution_count: 2, metadata: {}, data: { 'text/plain': ['   a  b\n', '0  1  2'] } },
      ],
    },
    {
      cell_type: 'code', execution_count: 3, metadata: {}, source: 'plot()',
      outputs: [
        { output_type: 'display_data', metadata: {}, data: { 'image/png': 'iVBORw0KGgo=', 'text/plain': ['<Figure size 640x480>'] } },
        { output_type: 'display_data', metadata: {}, data: { 'application/json': {} } },
      ],
    },
    {
      cell_type: 'code', execution_count: 4, metadata: {}, source: '1/0',
      outputs: [{ output_type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero', traceback: ['...'] }],
    },
    { cell_type: 'code', execution_count: null, metadata: {}, source: 'never_ran()', outputs: [] },
    { cell_type: 'raw', metadata: {}, source: 'raw text' },
  ],
}

const expected = [
  '# Jupyter Notebook (python)',
  '# 7 cells',
  '',
  '## Cell 1 [markdown]',
  '# Data Analysis',
  'This notebook analyzes the sales data.',
  '',
  '## Cell 2 [code]',
  'In [1]:',
  '```',
  'import pandas as pd',
  '```',
  '',
  '## Cell 3 [code]',
  'In [2]:',
  '```',
  'print("hi")',
  'df.head()',
  '```',
  '',
  '**Output:**',
  'hi',
  '   a  b',
  '0  1  2',
  '',
  '## Cell 4 [code]',
  'In [3]:',
  '```',
  'plot()',
  '```',
  '',
  '**Output:**',
  '<Figure size 640x480>',
  '[Image output]',
  '[Output data]',
  '',
  '## Cell 5 [code]',
  'In [4]:',
  '```',
  '1/0',
  '```',
  '',
  '**Output:**',
  'Error: ZeroDivisionError: division by zero',
  '...',
  '',
  '## Cell 6 [code]',
  'In [ ]:',
  '```',
  'never_ran()',
  '```',
  '',
  '## Cell 7 [raw]',
  'raw text',
].join('\n')

describe('notebooks', () => {
  it('renders every cell and output type in the README layout', async () => {
    await writeFile(join(host.cwd, 'analysis.ipynb'), JSON.stringify(notebook, null, 1))
    const result = await execTool(host.ctx, 'read_file', { file_path: 'analysis.ipynb' })
    expect(result.isError).toBe(false)
    expect(textOf(result)).toBe(expected)
  })

  it('the canonical value holds the cells', async () => {
    await writeFile(join(host.cwd, 'value.ipynb'), JSON.stringify(notebook))
    const result = await execTool(host.ctx, 'read_file', { file_path: 'value.ipynb', offset: 5, limit: 1 })
    expect(result.isError ? undefined : result.value).toEqual({
      kind: 'notebook',
      path: join(host.cwd, 'value.ipynb'),
      language: 'python',
      start_cell: 5,
      total_cells: 7,
      cells: [{ index: 5, type: 'code', execution_count: 4, source: '1/0', outputs: [{ type: 'error', text: 'Error: ZeroDivisionError: division by zero\n...' }] }],
      byte_capped: false,
    })
  })

  it('offset and limit count cells, with a continuation footer', async () => {
    await writeFile(join(host.cwd, 'paged.ipynb'), JSON.stringify(notebook))
    const result = await execTool(host.ctx, 'read_file', { file_path: 'paged.ipynb', offset: 2, limit: 1 })
    expect(textOf(result)).toBe([
      '# Jupyter Notebook (python)',
      '# 7 cells',
      '',
      '## Cell 2 [code]',
      'In [1]:',
      '```',
      'import pandas as pd',
      '```',
      '',
      '(Showing cells 2-2 of 7. Use offset=3 to continue.)',
    ].join('\n'))
    const past = await execTool(host.ctx, 'read_file', { file_path: 'paged.ipynb', offset: 9 })
    expect(textOf(past)).toBe('# Jupyter Notebook (python)\n# 7 cells\n\n(Offset 9 is past the end: the notebook has 7 cells.)')
  })

  it('the header keeps the README\'s exact "# N cells", also for one cell', async () => {
    await writeFile(join(host.cwd, 'one.ipynb'), JSON.stringify({ metadata: {}, cells: [{ cell_type: 'raw', source: 'only' }] }))
    expect(textOf(await execTool(host.ctx, 'read_file', { file_path: 'one.ipynb' }))).toBe('# Jupyter Notebook (unknown)\n# 1 cells\n\n## Cell 1 [raw]\nonly')
  })

  it('the byte budget stops at a cell boundary', async () => {
    const big = await readHost({ maxBytes: 1024 })
    try {
      const cells = Array.from({ length: 5 }, (_, i) => ({ cell_type: 'markdown', metadata: {}, source: `${i}`.repeat(400) }))
      await writeFile(join(big.cwd, 'big.ipynb'), JSON.stringify({ metadata: {}, cells }))
      const text = textOf(await execTool(big.ctx, 'read_file', { file_path: 'big.ipynb' }))
      expect(text).toBe(`# Jupyter Notebook (unknown)\n# 5 cells\n\n## Cell 1 [markdown]\n${'0'.repeat(400)}\n\n## Cell 2 [markdown]\n${'1'.repeat(400)}\n\n(Showing cells 1-2 of 5. Use offset=3 to continue.)`)
    } finally {
      await big.dispose()
    }
  })

  const malformed: [string, string, string][] = [
    ['not JSON', '{"cells": [', 'invalid JSON'],
    ['no cells', '{"metadata": {}}', '"cells" must be a list'],
    ['a bad source', '{"cells": [{"cell_type": "code", "source": 5}]}', 'cells[0].source must be a string or a list of strings'],
    ['bad outputs', '{"cells": [{"cell_type": "code", "source": "", "outputs": {}}]}', 'cells[0].outputs must be a list'],
    ['an output without a type', '{"cells": [{"cell_type": "code", "source": "", "outputs": [{}]}]}', 'cells[0].outputs[0].output_type must be a string'],
    ['a top level that is a list', '[]', 'the top level must be a JSON object'],
    ['a cell that is not an object', '{"cells": [3]}', 'cells[0] must be an object'],
    ['a fractional execution_count', '{"cells": [{"cell_type": "code", "source": "", "execution_count": 1.5}]}', 'cells[0].execution_count must be an integer or null'],
    ['a string execution_count', '{"cells": [{"cell_type": "code", "source": "", "execution_count": "3"}]}', 'cells[0].execution_count must be an integer or null'],
    ['an output that is not an object', '{"cells": [{"cell_type": "code", "source": "", "outputs": [7]}]}', 'cells[0].outputs[0] must be an object'],
    ['stream text that is a number', '{"cells": [{"cell_type": "code", "source": "", "outputs": [{"output_type": "stream", "text": 1}]}]}', 'cells[0].outputs[0].text must be a string or a list of strings'],
    ['result data that is a list', '{"cells": [{"cell_type": "code", "source": "", "outputs": [{"output_type": "execute_result", "data": []}]}]}', 'cells[0].outputs[0].data must be an object'],
  ]
  it('a notebook that is not UTF-8 is a clear error', async () => {
    await writeFile(join(host.cwd, 'latin1.ipynb'), Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]))
    const result = await execTool(host.ctx, 'read_file', { file_path: 'latin1.ipynb' })
    expect(result.isError ? result.error.info?.code : 'no error').toBe('FS_NOT_TEXT')
    expect(textOf(result)).toBe(`Error: cannot read "${join(host.cwd, 'latin1.ipynb')}": malformed notebook: it is not UTF-8 text`)
  })

  for (const [what, content, reason] of malformed) {
    it(`a malformed notebook (${what}) is a clear error naming what is wrong`, async () => {
      await writeFile(join(host.cwd, 'bad.ipynb'), content)
      const result = await execTool(host.ctx, 'read_file', { file_path: 'bad.ipynb' })
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain(`Error: cannot read "${join(host.cwd, 'bad.ipynb')}": malformed notebook: ${reason}`)
    })
  }
})
