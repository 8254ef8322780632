import { describe, expect, it } from 'vitest'
import { renderListing, type RenderMode } from '../src/render.ts'
import type { Listing } from '../src/types.ts'

const plain: RenderMode = { pathArg: '.', recursive: false, long: false, extended: false, filters: [], offset: 0 }

const RULE = '──────────────────────────────────────────────────'

describe('the README\'s layouts, byte for byte', () => {
  it('small directory', () => {
    const value: Listing = {
      path: '/home/user/project',
      entries: [
        { name: 'src', type: 'directory' },
        { name: 'package.json', type: 'file', size: 1234 },
        { name: 'README.md', type: 'file', size: 5678 },
      ],
      stats: { total: 3, files: 2, directories: 1, others: 0 },
    }
    expect(renderListing(value, plain)).toBe([
      'Listed 3 items in /home/user/project:',
      RULE,
      'DIR               src/',
      'FILE      1234 B  package.json',
      'FILE      5678 B  README.md',
      RULE,
      'Total: 3 items (1 directory, 2 files)',
    ].join('\n'))
  })

  it('with ignore (3 hidden)', () => {
    const value: Listing = {
      path: '/home/user/project',
      entries: [{ name: 'src', type: 'directory' }, { name: 'package.json', type: 'file', size: 1234 }],
      stats: { total: 2, files: 1, directories: 1, others: 0 },
      ignored: 3,
    }
    expect(renderListing(value, plain)).toBe([
      'Listed 2 items in /home/user/project:',
      RULE,
      'DIR               src/',
      'FILE      1234 B  package.json',
      RULE,
      '[3 items hidden by ignore patterns]',
      '',
      'Total: 2 items (1 directory, 1 file)',
    ].join('\n'))
  })

  it('large directory, truncated after sorting', () => {
    const files = Array.from({ length: 98 }, (_, i) => ({ name: `file${String(i).padStart(3, '0')}.ts`, type: 'file' as const, size: 100 + i }))
    const value: Listing = {
      path: '/home/user/large-project',
      entries: [{ name: 'src', type: 'directory' }, { name: 'tests', type: 'directory' }, ...files],
      stats: { total: 150, files: 148, directories: 2, others: 0 },
      truncated: { shown: 100, total: 150, remaining: 50 },
    }
    const text = renderListing(value, plain)
    expect(text.split('\n').slice(0, 6)).toEqual([
      'Listed 150 items in /home/user/large-project:',
      RULE,
      'DIR               src/',
      'DIR               tests/',
      'FILE       100 B  file000.ts',
      'FILE       101 B  file001.ts',
    ])
    expect(text.split('\n').slice(-4)).toEqual([
      RULE,
      '[50 items truncated, showing first 100 of 150 total]',
      '',
      'Total: 150 items (2 directories, 148 files)',
    ])
  })

  it('empty, and empty because ignore hid everything, are distinct', () => {
    const empty: Listing = { path: '/home/user/empty', entries: [], stats: { total: 0, files: 0, directories: 0, others: 0 } }
    expect(renderListing(empty, plain)).toBe('Directory /home/user/empty is empty.')
    expect(renderListing({ ...empty, path: '/home/user/project', ignored: 5 }, plain))
      .toBe('Directory /home/user/project is not empty. The ignore patterns hid 5 items.')
    expect(renderListing({ ...empty, path: '/p', ignored: 1 }, plain))
      .toBe('Directory /p is not empty. The ignore patterns hid 1 item.')
  })

  it('singular forms wherever a count is 1', () => {
    const value: Listing = {
      path: '/p',
      entries: [{ name: 'a', type: 'file', size: 1 }],
      stats: { total: 2, files: 1, directories: 1, others: 0 },
      truncated: { shown: 1, total: 2, remaining: 1 },
      ignored: 1,
    }
    expect(renderListing(value, plain)).toBe([
      'Listed 2 items in /p:',
      RULE,
      'FILE         1 B  a',
      RULE,
      '[1 item truncated, showing first 1 of 2 total]',
      '[1 item hidden by ignore patterns]',
      '',
      'Total: 2 items (1 directory, 1 file)',
    ].join('\n'))
    const one: Listing = { path: '/p', entries: [{ name: 'd', type: 'directory' }], stats: { total: 1, files: 0, directories: 1, others: 0 } }
    expect(renderListing(one, plain)).toBe(['Listed 1 item in /p:', RULE, 'DIR               d/', RULE, 'Total: 1 item (1 directory, 0 files)'].join('\n'))
  })

  it('others are counted and named only when present', () => {
    const value: Listing = { path: '/p', entries: [{ name: 'fifo', type: 'other' }], stats: { total: 1, files: 0, directories: 0, others: 1 } }
    expect(renderListing(value, plain)).toBe(['Listed 1 item in /p:', RULE, 'OTHER             fifo', RULE, 'Total: 1 item (0 directories, 0 files, 1 other)'].join('\n'))
  })
})

describe('extension layouts', () => {
  const tree: RenderMode = { ...plain, pathArg: 'src', recursive: true, extended: true }

  it('the README tree example, depth 2 (tools/builtin/ shows with nothing under it)', () => {
    const entries = [
      ['cli', 'directory'], ['cli/index.ts', 'file'], ['cli/session-picker.ts', 'file'], ['cli/ui.ts', 'file'],
      ['tools', 'directory'], ['tools/builtin', 'directory'], ['tools/index.ts', 'file'], ['tools/types.ts', 'file'],
      ['index.ts', 'file'],
    ].map(([path, type]) => ({ name: path!.split('/').at(-1)!, path: path!, type: type as 'file' | 'directory' }))
    const value: Listing = { path: '/w/src', entries, stats: { total: 9, files: 6, directories: 3, others: 0, symlinks: 0 } }
    expect(renderListing(value, tree)).toBe([
      'src/',
      '├── cli/',
      '│   ├── index.ts',
      '│   ├── session-picker.ts',
      '│   └── ui.ts',
      '├── tools/',
      '│   ├── builtin/',
      '│   ├── index.ts',
      '│   └── types.ts',
      '└── index.ts',
      '',
      'Total: 9 items (3 directories, 6 files)',
    ].join('\n'))
  })

  it('a cut tree names the offset that continues it', () => {
    const value: Listing = {
      path: '/w/src',
      entries: [{ name: 'cli', path: 'cli', type: 'directory', siblings_cut: true }, { name: 'a.ts', path: 'cli/a.ts', type: 'file', siblings_cut: true }],
      stats: { total: 5, files: 4, directories: 1, others: 0, symlinks: 0 },
      truncated: { shown: 2, total: 5, remaining: 3, next_offset: 2 },
    }
    expect(renderListing(value, tree)).toBe([
      'src/',
      '├── cli/',
      '│   ├── a.ts',
      '',
      '[3 items truncated, showing first 2 of 5 total]',
      '[Use offset=2 to continue.]',
      '',
      'Total: 5 items (1 directory, 4 files)',
    ].join('\n'))
  })

  it('a page that starts inside a directory names the directories it continues', () => {
    const value: Listing = {
      path: '/w/src',
      entries: [{ name: 'b.ts', path: 'cli/deep/b.ts', type: 'file' }, { name: 'c.ts', path: 'cli/c.ts', type: 'file' }, { name: 'x.ts', path: 'x.ts', type: 'file' }],
      stats: { total: 7, files: 5, directories: 2, others: 0, symlinks: 0 },
      offset: 4,
    }
    expect(renderListing(value, { ...tree, offset: 4 })).toBe([
      'src/',
      '├── cli/ (continued)',
      '│   ├── deep/ (continued)',
      '│   │   └── b.ts',
      '│   └── c.ts',
      '└── x.ts',
      '',
      '[Showing items 5-7 of 7 total]',
      '',
      'Total: 7 items (2 directories, 5 files)',
    ].join('\n'))
  })

  it('collapsed directories are one line with their direct-children count; what was hidden is counted per source', () => {
    const value: Listing = {
      path: '/w',
      entries: [
        { name: '.git', path: '.git', type: 'directory', collapsed: 'heavy', children: 27 },
        { name: 'dist', path: 'dist', type: 'directory', collapsed: 'gitignored', children: 1 },
        { name: 'node_modules', path: 'node_modules', type: 'directory', collapsed: 'gitignored', children: 1204 },
        { name: 'src', path: 'src', type: 'directory' },
        { name: 'a.ts', path: 'src/a.ts', type: 'file' },
      ],
      stats: { total: 5, files: 1, directories: 4, others: 0, symlinks: 0 },
      ignored: 3,
      gitignored: 340,
    }
    expect(renderListing(value, { ...tree, pathArg: '.' })).toBe([
      './',
      '├── .git/ (not expanded, 27 entries)',
      '├── dist/ (gitignored, 1 entry)',
      '├── node_modules/ (gitignored, 1204 entries)',
      '└── src/',
      '    └── a.ts',
      '',
      '[Hidden: 3 by ignore patterns, 340 by .gitignore]',
      '',
      'Total: 5 items (4 directories, 1 file)',
    ].join('\n'))
    const truncated = { shown: 2, total: 5, remaining: 1, next_offset: 4 }
    const cut: Listing = { ...value, entries: value.entries.slice(2, 4), offset: 2, truncated }
    expect(renderListing(cut, { ...tree, pathArg: '.', offset: 2 }).split('\n').slice(-6, -2)).toEqual([
      '',
      '[1 item truncated, showing items 3-4 of 5 total]',
      '[Use offset=4 to continue.]',
      '[Hidden: 3 by ignore patterns, 340 by .gitignore]',
    ])
  })

  it('a tree that .gitignore empties says what it hid', () => {
    const value: Listing = { path: '/w/logs', entries: [], stats: { total: 0, files: 0, directories: 0, others: 0, symlinks: 0 }, gitignored: 4 }
    expect(renderListing(value, tree)).toBe('Directory /w/logs is not empty. Hidden: 4 by .gitignore.')
  })

  it('recursive with a pattern lists matching relative paths', () => {
    const value: Listing = {
      path: '/w/src',
      entries: [{ name: 'index.ts', path: 'index.ts', type: 'file' }, { name: 'ui.ts', path: 'cli/ui.ts', type: 'file' }],
      stats: { total: 2, files: 2, directories: 0, others: 0, symlinks: 0 },
      filtered: 3,
    }
    expect(renderListing(value, { ...tree, filters: ['pattern "*.ts"'] })).toBe(['src/', '  index.ts', '  cli/ui.ts', '', 'Total: 2 items (0 directories, 2 files)'].join('\n'))
  })

  it('long layout shows permissions, size, modified and link targets', () => {
    const value: Listing = {
      path: '/w',
      entries: [
        { name: 'd', type: 'directory', permissions: 'rwxr-xr-x', modified: '2024-01-15T11:00:00.000Z' },
        { name: 'f', type: 'file', size: 1234, permissions: 'rw-r--r--', modified: '2024-01-15T10:30:00.000Z' },
        { name: 'l', type: 'symlink', target: 'f', permissions: 'rwxrwxrwx', modified: '2024-01-15T10:30:00.000Z' },
      ],
      stats: { total: 3, files: 1, directories: 1, others: 0, symlinks: 1 },
    }
    expect(renderListing(value, { ...plain, long: true, extended: true })).toBe([
      'Listed 3 items in /w:',
      RULE,
      'DIR    rwxr-xr-x               -  2024-01-15T11:00:00.000Z  d/',
      'FILE   rw-r--r--          1234 B  2024-01-15T10:30:00.000Z  f',
      'LINK   rwxrwxrwx               -  2024-01-15T10:30:00.000Z  l -> f',
      RULE,
      'Total: 3 items (1 directory, 1 file, 1 symlink)',
    ].join('\n'))
  })

  it('filters that leave nothing say so, distinct from an empty directory', () => {
    const value: Listing = { path: '/w', entries: [], stats: { total: 0, files: 0, directories: 0, others: 0 }, filtered: 4, ignored: 1 }
    expect(renderListing(value, { ...plain, extended: true, filters: ['pattern "*.py"'] }))
      .toBe('Directory /w is not empty, but nothing matches pattern "*.py" (4 items left out). The ignore patterns hid 1 item.')
  })

  it('a walk stopped by its budget reports lower bounds, never a false exact total', () => {
    const value: Listing = {
      path: '/w',
      entries: [{ name: 'a', path: 'a', type: 'file', size: 1 }],
      stats: { total: 200000, files: 200000, directories: 0, others: 0, symlinks: 0 },
      truncated: { shown: 1, total: 200000, remaining: 199999 },
      partial: true,
    }
    const text = renderListing(value, { ...tree, pathArg: '/w' })
    expect(text).toContain('[199999 items truncated, showing first 1 of at least 200000 total]')
    expect(text).toContain('Total: at least 200000 items')
  })
})
