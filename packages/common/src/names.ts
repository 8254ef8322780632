// The one order of names both path tools use: the locale's, with names it finds equal (NFC vs NFD) in code-point order.

const collator = new Intl.Collator()

/** A total order: localeCompare's, then code points, so the order never depends on how a directory listed its names. */
export function compareNames(a: string, b: string): number {
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0)
}
