// The orders of a directory's entries, and a bounded sort: only the entries that can still be shown are put in order.
import { compareNames } from '@gencode-ai/dsh-tool-common'
import type { ListRequest } from '../args.ts'
import type { Child } from '../types.ts'

export type Compare = (a: Child, b: Child) => number

const GROUP: Record<Child['type'], number> = { directory: 0, file: 1, symlink: 2, other: 2 }

// common's name order: the locale's; names it finds equal (NFC vs NFD) fall back to code points, never to readdir's order.
const byName: Compare = (a, b) => compareNames(a.name, b.name)

/** `type` is the README's order (directories, files, the rest); `size` / `modified` put the largest / newest first (`ls -S` / `ls -t`). */
const ORDERS: Record<ListRequest['sort'], Compare> = {
  type: (a, b) => GROUP[a.type] - GROUP[b.type] || byName(a, b),
  name: byName,
  size: (a, b) => (b.size ?? -1) - (a.size ?? -1) || byName(a, b),
  modified: (a, b) => (b.mtimeMs ?? 0) - (a.mtimeMs ?? 0) || byName(a, b),
}

/** The request's order of entries, reversed if asked. */
export function orderOf(request: Pick<ListRequest, 'sort' | 'reverse'>): Compare {
  const order = ORDERS[request.sort]
  return request.reverse ? (a, b) => order(b, a) : order
}

/** Put the first `count` children in order (a bounded max-heap picks them, then they are sorted); the rest follow unordered. */
export function inOrder(children: Child[], compare: Compare, count: number): void {
  if (count >= children.length || children.length <= 16) {
    children.sort(compare)
    return
  }
  if (count <= 0) return
  const heap: Child[] = [] // the `count` least so far, greatest at the top
  const rest: Child[] = []
  for (const child of children) {
    if (heap.length < count) {
      heap.push(child)
      siftUp(heap, heap.length - 1, compare)
    } else if (compare(child, heap[0] as Child) < 0) {
      rest.push(heap[0] as Child)
      heap[0] = child
      siftDown(heap, compare)
    } else {
      rest.push(child)
    }
  }
  heap.sort(compare)
  heap.forEach((child, index) => { children[index] = child })
  rest.forEach((child, index) => { children[heap.length + index] = child })
}

function siftUp(heap: Child[], at: number, compare: Compare): void {
  while (at > 0) {
    const up = (at - 1) >> 1
    if (compare(heap[at] as Child, heap[up] as Child) <= 0) return
    ;[heap[at], heap[up]] = [heap[up] as Child, heap[at] as Child]
    at = up
  }
}

function siftDown(heap: Child[], compare: Compare): void {
  for (let at = 0; ;) {
    const left = 2 * at + 1
    const right = left + 1
    let top = at
    if (left < heap.length && compare(heap[left] as Child, heap[top] as Child) > 0) top = left
    if (right < heap.length && compare(heap[right] as Child, heap[top] as Child) > 0) top = right
    if (top === at) return
    ;[heap[at], heap[top]] = [heap[top] as Child, heap[at] as Child]
    at = top
  }
}
