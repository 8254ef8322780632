// list_directory's model text (pure): the flat table or the tree, with the truncation footer.
import { escapeName as esc } from '@gencode-ai/dsh-tool-common'
import type { callMode } from './args.ts'
import type { Entry, Listing } from './types.ts'

/** The rule of the README's "What the model reads": 50 box-drawing characters. */
const RULE = '─'.repeat(50)

const TAGS: Record<Entry['type'], string> = { directory: 'DIR', file: 'FILE', symlink: 'LINK', other: 'OTHER' }

/** `pathArg`: the `path` argument as given, the tree's first line. */
export type RenderMode = ReturnType<typeof callMode> & { pathArg: string }

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`
const items = (n: number): string => plural(n, 'item', 'items')
const atLeast = (value: Listing): string => value.partial === true ? 'at least ' : ''

export function renderListing(value: Listing, mode: RenderMode): string {
  const empty = emptyMessage(value, mode)
  if (empty !== undefined) return empty
  const lines = mode.recursive ? treeLines(value, mode) : listLines(value, mode)
  const notices = noticeLines(value, mode)
  if (notices.length > 0) lines.push(...notices, '')
  const parts = [plural(value.stats.directories, 'directory', 'directories'), plural(value.stats.files, 'file', 'files')]
  if ((value.stats.symlinks ?? 0) > 0) parts.push(plural(value.stats.symlinks ?? 0, 'symlink', 'symlinks'))
  if (value.stats.others > 0) parts.push(plural(value.stats.others, 'other', 'others'))
  lines.push(`Total: ${atLeast(value)}${items(value.stats.total)} (${parts.join(', ')})`)
  return lines.join('\n')
}

function emptyMessage(value: Listing, mode: RenderMode): string | undefined {
  if (value.stats.total > 0) return undefined
  const hid = value.ignored ?? 0
  const left = value.filtered ?? 0
  if (left === 0 && hid === 0 && value.gitignored === undefined) return `Directory ${esc(value.path)} is empty.`
  if (value.gitignored !== undefined) {
    const filters = left === 0 ? '' : ` Nothing matches ${mode.filters.join(' and ')} (${items(left)} left out).`
    return `Directory ${esc(value.path)} is not empty. Hidden: ${hiddenParts(value)}.${filters}`
  }
  if (left === 0) return `Directory ${esc(value.path)} is not empty. The ignore patterns hid ${items(hid)}.`
  const also = hid > 0 ? ` The ignore patterns hid ${items(hid)}.` : ''
  return `Directory ${esc(value.path)} is not empty, but nothing matches ${mode.filters.join(' and ')} (${items(left)} left out).${also}`
}

function listLines(value: Listing, mode: RenderMode): string[] {
  // Long: a column is shown when some entry has it.
  const permissions = value.entries.some((entry) => entry.permissions !== undefined)
  const modified = value.entries.some((entry) => entry.modified !== undefined)
  const lines = value.entries.map((entry) => {
    const size = entry.type === 'file' ? `${String(entry.size ?? '?').padStart(10)} B` : ''
    const plainName = entry.type === 'directory' ? `${esc(entry.name)}/${errorNote(entry)}` : displayName(entry)
    if (!mode.long) return `${`${TAGS[entry.type]}${size}`.padEnd(16)}  ${plainName}`
    const parts = [TAGS[entry.type].padEnd(5)]
    if (permissions) parts.push((entry.permissions ?? '-').padEnd(9))
    parts.push((entry.size === undefined ? '-' : `${entry.size} B`).padStart(14))
    if (modified) parts.push((entry.modified ?? '-').padEnd(24))
    return [...parts, displayName(entry)].join('  ')
  })
  return [`Listed ${atLeast(value)}${items(value.stats.total)} in ${esc(value.path)}:`, RULE, ...lines, RULE]
}

function displayName(entry: Entry): string {
  if (entry.type === 'directory') return `${esc(entry.name)}/${collapsedNote(entry)}${errorNote(entry)}`
  return entry.type === 'symlink' ? linkName(entry) : esc(entry.name)
}

const linkName = (entry: Entry): string => entry.target === undefined ? `${esc(entry.name)} (symlink)` : `${esc(entry.name)} -> ${esc(entry.target)}`

const errorNote = (entry: Entry): string => entry.error === undefined ? '' : ` [unreadable: ${entry.error}]`

/** `node_modules/ (gitignored, 1204 entries)`, `.git/ (not expanded, 27 entries)`. */
function collapsedNote(entry: Entry): string {
  if (entry.collapsed === undefined) return ''
  const why = entry.collapsed === 'gitignored' ? 'gitignored' : 'not expanded'
  return entry.children === undefined ? ` (${why})` : ` (${why}, ${plural(entry.children, 'entry', 'entries')})`
}

function treeLines(value: Listing, mode: RenderMode): string[] {
  const lines = [mode.pathArg === '/' ? '/' : `${esc(mode.pathArg.replace(/\/+$/, ''))}/`]
  const flat = mode.filters.some((filter) => filter.startsWith('pattern') || filter === 'files_only')
  // lastAt[k]: whether the entry currently open at depth k is the last of its siblings.
  const lastAt: boolean[] = []
  value.entries.forEach((entry, index) => {
    const rel = entry.path ?? entry.name
    if (flat) {
      const name = entry.type === 'directory' ? `${esc(rel)}/${collapsedNote(entry)}` : esc(rel)
      lines.push(`  ${name}${entry.type === 'symlink' ? ` -> ${entry.target === undefined ? '(symlink)' : esc(entry.target)}` : ''}${errorNote(entry)}${detailNote(entry, mode)}`)
      return
    }
    const depth = depthOf(entry)
    // A page that starts inside a directory names the directories it continues (not entries).
    if (index === 0) rel.split('/').slice(0, -1).forEach((name, level) => lines.push(`${'│   '.repeat(level)}├── ${esc(name)}/ (continued)`))
    const last = isLast(value.entries, index, depth) && entry.siblings_cut !== true
    lastAt[depth] = last
    const prefix = Array.from({ length: depth - 1 }, (_, level) => lastAt[level + 1] ? '    ' : '│   ').join('')
    lines.push(`${prefix}${last ? '└── ' : '├── '}${displayName(entry)}${detailNote(entry, mode)}`)
  })
  return [...lines, '']
}

const depthOf = (entry: Entry | undefined): number => (entry?.path ?? entry?.name ?? '').split('/').length

/** Last among its shown siblings: the next shown entry at this depth or shallower is not a sibling. */
function isLast(entries: Entry[], index: number, depth: number): boolean {
  for (let next = index + 1; next < entries.length; next++) {
    const nextDepth = depthOf(entries[next])
    if (nextDepth <= depth) return nextDepth < depth
  }
  return true
}

function detailNote(entry: Entry, mode: RenderMode): string {
  const size = entry.size === undefined ? undefined : `${entry.size} B`
  const details = [size, entry.permissions, entry.modified].filter((detail) => detail !== undefined)
  return !mode.long || details.length === 0 ? '' : `  (${details.join(', ')})`
}

function noticeLines(value: Listing, mode: RenderMode): string[] {
  const lines: string[] = []
  const cut = value.truncated
  const skipped = value.offset ?? 0
  const window = `items ${skipped + 1}-${skipped + value.entries.length} of ${atLeast(value)}${value.stats.total} total`
  if (cut !== undefined) {
    lines.push(skipped === 0
      ? `[${items(cut.remaining)} truncated, showing first ${cut.shown} of ${atLeast(value)}${cut.total} total]`
      : `[${items(cut.remaining)} truncated, showing ${window}]`)
    if (cut.next_offset !== undefined) lines.push(`[Use offset=${cut.next_offset} to continue.]`)
  } else if (skipped > 0) {
    lines.push(`[Showing ${window}]`)
  }
  if (mode.recursive && (value.ignored !== undefined || value.gitignored !== undefined)) {
    lines.push(`[Hidden: ${hiddenParts(value)}]`)
  } else if (value.ignored !== undefined) {
    lines.push(`[${items(value.ignored)} hidden by ignore patterns]`)
  }
  if (value.gitignore_refused !== undefined) {
    lines.push(`[Not applied (too many rules to match): ${value.gitignore_refused.map((file) => esc(file)).join(', ')}]`)
  }
  if (value.metadata_unavailable === true) lines.push('[modified times, permissions and link targets are not reported by this filesystem provider]')
  return lines
}

/** What a recursive result hid, per source (non-zero parts only). */
function hiddenParts(value: Listing): string {
  return [
    value.ignored === undefined ? undefined : `${value.ignored} by ignore patterns`,
    value.gitignored === undefined ? undefined : `${value.gitignored} by .gitignore${value.tracked_unknown === true ? ' (tracked or not: no git index read)' : ''}`,
  ].filter((part) => part !== undefined).join(', ')
}
