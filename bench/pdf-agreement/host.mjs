// The reading side of run.mjs: a host with the built plugin, in its own process (so a file that
// stalls or crashes it is recorded, and the next file gets a fresh one). Reads file names, one a
// line, on stdin; prints one JSON line per file: { file, pages: [text…] } or { file, error }.
// Usage: node bench/pdf-agreement/host.mjs <plugin dist/index.js> <corpus dir> <pages per file>
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import { CallId } from '@deepseek-ai/dsh-llm'
import { bootServices } from '@gencode-ai/testkit'

const [plugin, dir, most] = process.argv.slice(2)
const PAGES = Number(most)
const Read = await import(pathToFileURL(plugin).href)
const ctx = await bootServices({ cwd: dir })
await ctx.plugin(Read, { maxBytes: 50 * 2 ** 20 })
let seq = 0

async function read(file, pages) {
  const result = await ctx.tools.execute({ callId: CallId(`p${++seq}`), name: 'read_file', arguments: pages === undefined ? { file_path: file } : { file_path: file, pages }, signal: new AbortController().signal })
  if (result.isError) return { error: result.content.map((part) => part.text ?? '').join('') }
  return { value: result.value }
}

async function ours(file) {
  const first = await read(file)
  if (first.error !== undefined) return first
  if (first.value.kind !== 'pdf') return { error: `read as ${first.value.kind}`, notPdf: true }
  const pages = first.value.pages.map((page) => page.text)
  const total = Math.min(first.value.pages_total, PAGES)
  if (total > pages.length) {
    const rest = await read(file, `${pages.length + 1}-${total}`)
    if (rest.error !== undefined) return rest
    pages.push(...rest.value.pages.map((page) => page.text))
  }
  return { pages }
}

console.log(JSON.stringify({ ready: true }))
for await (const file of createInterface({ input: process.stdin })) {
  if (file === '') continue
  console.log(JSON.stringify({ file, ...await ours(file) }))
}
process.exit(0)
