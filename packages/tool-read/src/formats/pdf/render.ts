/** Pure: the PDF room's value -> its pages' text, and the `pages` continuation. */

import type { PdfValue } from './value.ts'

/** [1, 2, 3, 5] -> "1-3,5". */
export function pageRanges(pages: readonly number[]): string {
  const ranges: [number, number][] = []
  for (const page of pages) {
    const last = ranges.at(-1)
    if (last !== undefined && page === last[1] + 1) last[1] = page
    else ranges.push([page, page])
  }
  return ranges.map(([first, end]) => first === end ? `${first}` : `${first}-${end}`).join(',')
}

const NO_TEXT_LAYER = '(No text layer on this page: it may be a scanned image.)'

export function renderPdf(value: PdfValue): string {
  const body = value.pages.map((page) => `--- Page ${page.number} ---\n${page.text === '' ? NO_TEXT_LAYER : page.text}`).join('\n\n')
  if (value.next === undefined) return body
  const shown = pageRanges(value.pages.map((page) => page.number))
  return `${body}\n\n(Showing pages ${shown} of ${value.pages_total}. Use pages="${value.next}" to continue.)`
}
