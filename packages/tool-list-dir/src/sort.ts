import type { ListRequest } from './args.ts'
import type { Child } from './types.ts'

type Compare = (a: Child, b: Child) => number

const GROUP: Record<Child['type'], number> = { directory: 0, file: 1, symlink: 2, other: 2 }

// The order of a.localeCompare(b) from one shared collator; names it finds equal (NFC vs NFD,
// zero-width characters) fall back to code points, so the order never depends on readdir's.
const collator = new Intl.Collator()
const byName: Compare = (a, b) => collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/** `type` is seed 003's order (directories, files, the rest); `size` / `modified` put the largest / newest first (`ls -S` / `ls -t`). */
const ORDERS: Record<ListRequest['sort'], Compare> = {
  type: (a, b) => GROUP[a.type] - GROUP[b.type] || byName(a, b),
  name: byName,
  size: (a, b) => (b.size ?? -1) - (a.size ?? -1) || byName(a, b),
  modified: (a, b) => (b.mtimeMs ?? 0) - (a.mtimeMs ?? 0) || byName(a, b),
}

export function compareBy(key: ListRequest['sort'], reverse: boolean): Compare {
  const order = ORDERS[key]
  return reverse ? (a, b) => order(b, a) : order
}
