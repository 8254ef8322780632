import type { Child } from './types.ts'

export type SortKey = 'name' | 'size' | 'modified' | 'type'

const GROUP: Record<Child['type'], number> = { directory: 0, file: 1, symlink: 2, other: 2 }

// Same order as a.localeCompare(b) (one default collator), without building one per comparison;
// names the collator finds equal (NFC vs NFD, zero-width characters) fall back to code points,
// so the order never depends on readdir's.
const collator = new Intl.Collator()
const byName = (a: Child, b: Child): number => collator.compare(a.name, b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

/**
 * The order of one directory's children. `type` (the default) is seed 003's: directories, then
 * files, then the rest, each group alphabetical. `name` ignores type; `size` and `modified` put
 * the largest / newest first (as `ls -S` / `ls -t`), ties by name. `reverse` flips the order.
 */
export function compareBy(key: SortKey, reverse: boolean): (a: Child, b: Child) => number {
  const base = comparator(key)
  return reverse ? (a, b) => base(b, a) : base
}

function comparator(key: SortKey): (a: Child, b: Child) => number {
  switch (key) {
    case 'type': return (a, b) => GROUP[a.type] - GROUP[b.type] || byName(a, b)
    case 'name': return byName
    case 'size': return (a, b) => (b.size ?? -1) - (a.size ?? -1) || byName(a, b)
    case 'modified': return (a, b) => (b.mtimeMs ?? 0) - (a.mtimeMs ?? 0) || byName(a, b)
  }
}
