// read_file's PDF text against poppler's pdftotext, page by page, over a directory of PDFs (e.g.
// pdf.js's test/pdfs), through the real host services with the built plugin.
// Usage: node bench/pdf-agreement/run.mjs <corpus dir> [--plugin <path to dist/index.js>] [--out <file.jsonl>]
// Needs pdftotext (poppler-utils) and the built package (npx -y pnpm@9.15.9 run build).
// Per page (the first 20 of each file), both texts are NFKC-normalised with all whitespace removed;
// a page agrees when its similarity is >= 0.9. Two similarities: `chars` compares the multisets of
// characters (reading order aside: pdftotext reorders columns), `ordered` is 1 - Levenshtein / length.
// Each reading host has a 2 GB heap; a file that stalls or kills it is counted as such.
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync, realpathSync, writeFileSync } from 'node:fs'
import { join, resolve as absolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { distance } from 'fastest-levenshtein'

const args = process.argv.slice(2)
const option = (name, fallback) => {
  const at = args.indexOf(name)
  if (at === -1) return fallback
  const [value] = args.splice(at, 2).slice(1)
  return value
}
const plugin = absolute(option('--plugin', fileURLToPath(new URL('../../packages/tool-read/dist/index.js', import.meta.url))))
const out = option('--out', undefined)
const corpus = args[0]
if (corpus === undefined) {
  console.error('usage: node bench/pdf-agreement/run.mjs <corpus dir> [--plugin <dist/index.js>] [--out <file.jsonl>]')
  process.exit(2)
}
const dir = realpathSync(corpus)
const PAGES = 20
const NO_TEXT = '(No text layer on this page: it may be a scanned image.)'
const SIMILAR = 0.9
const CAP = 4000

const normal = (text) => text.normalize('NFKC').replace(/[\s\u00ad\u200b-\u200d\ufeff]+/gu, '')

function charSimilarity(a, b) {
  if (a.length === 0 && b.length === 0) return 1
  const counts = new Map()
  for (const c of a) counts.set(c, (counts.get(c) ?? 0) + 1)
  for (const c of b) counts.set(c, (counts.get(c) ?? 0) - 1)
  let diff = 0
  for (const n of counts.values()) diff += Math.abs(n)
  return 1 - diff / (a.length + b.length)
}

function orderedSimilarity(a, b) {
  const [x, y] = [a.slice(0, CAP), b.slice(0, CAP)]
  const longest = Math.max(x.length, y.length)
  return longest === 0 ? 1 : 1 - distance(x, y) / longest
}

function poppler(file) {
  const run = spawnSync('pdftotext', ['-enc', 'UTF-8', '-l', String(PAGES), file, '-'], { encoding: 'utf8', timeout: 60_000, maxBuffer: 256 * 2 ** 20 })
  if (run.status !== 0) return { error: (run.stderr || `status ${run.status}`).trim().split('\n').at(-1) }
  const pages = run.stdout.split('\f')
  if (pages.at(-1) === '') pages.pop()
  return { pages }
}

/** Our text of each file, from a child host; a file that stalls it (STALL_MS) or kills it is recorded and the next gets a new host. */
const STALL_MS = 120_000
function hostReads(files) {
  const results = new Map()
  const queue = [...files]
  return new Promise((resolve) => {
    const next = () => {
      if (queue.length === 0) return resolve(results)
      const child = spawn(process.execPath, ['--max-old-space-size=2048', fileURLToPath(new URL('./host.mjs', import.meta.url)), plugin, dir, String(PAGES)], { stdio: ['pipe', 'pipe', 'inherit'] })
      let current
      let timer
      let buffered = ''
      const arm = () => {
        clearTimeout(timer)
        timer = setTimeout(() => child.kill('SIGKILL'), STALL_MS)
      }
      const feed = () => {
        current = queue.shift()
        if (current === undefined) return child.stdin.end()
        process.stderr.write(`${files.length - queue.length}/${files.length} ${current}\r`)
        arm()
        child.stdin.write(`${current}\n`)
      }
      child.stdout.on('data', (data) => {
        buffered += data
        let at
        while ((at = buffered.indexOf('\n')) !== -1) {
          const line = JSON.parse(buffered.slice(0, at))
          buffered = buffered.slice(at + 1)
          if (line.file !== undefined) results.set(line.file, line)
          feed()
        }
      })
      child.on('exit', (code, signal) => {
        clearTimeout(timer)
        if (current !== undefined && !results.has(current)) {
          results.set(current, { file: current, error: signal === 'SIGKILL' ? `host stalled over ${STALL_MS} ms` : `host died (${signal ?? `exit ${code}`})`, host: true })
        }
        next()
      })
    }
    next()
  })
}

const files = readdirSync(dir).filter((name) => name.toLowerCase().endsWith('.pdf')).sort()
const totals = {
  files: files.length, pages: 0, chars: 0, ordered: 0, ourEmpty: 0, theirEmpty: 0, bothEmpty: 0,
  ourErrors: 0, theirErrors: 0, bothErrors: 0, rawErrors: 0, hostFailures: 0, notPdf: 0, withText: 0, withTextChars: 0,
}
const rows = []
const started = performance.now()
const readings = await hostReads(files.map((name) => join(dir, name)))
for (const name of files) {
  const file = join(dir, name)
  const theirs = poppler(file)
  const mine = readings.get(file)
  const row = { file: name }
  if (mine.error !== undefined) {
    row.ours = mine.error.slice(0, 300)
    // Our errors name the file and say what to do; a raw library message does neither.
    if (mine.host === true) totals.hostFailures++
    else if (mine.notPdf === true) totals.notPdf++
    else if (!mine.error.includes(JSON.stringify(file))) totals.rawErrors++
  }
  if (theirs.error !== undefined) row.theirs = theirs.error.slice(0, 300)
  if (mine.error !== undefined && theirs.error !== undefined) totals.bothErrors++
  else if (mine.error !== undefined) totals.ourErrors++
  else if (theirs.error !== undefined) totals.theirErrors++
  if (theirs.pages !== undefined) {
    // Pages our read did not give (an error) count as empty on our side.
    const count = Math.min(theirs.pages.length, PAGES)
    row.pages = []
    for (let i = 0; i < count; i++) {
      const a = normal(theirs.pages[i] ?? '')
      const text = mine.pages?.[i] ?? ''
      const b = normal(text === NO_TEXT ? '' : text)
      const chars = charSimilarity(a, b)
      const ordered = orderedSimilarity(a, b)
      totals.pages++
      if (chars >= SIMILAR) totals.chars++
      if (ordered >= SIMILAR) totals.ordered++
      if (a.length > 0 && b.length === 0) totals.ourEmpty++
      if (a.length === 0 && b.length > 0) totals.theirEmpty++
      if (a.length === 0 && b.length === 0) totals.bothEmpty++
      if (a.length > 0) totals.withText++
      if (a.length > 0 && chars >= SIMILAR) totals.withTextChars++
      row.pages.push({ chars: Number(chars.toFixed(3)), ordered: Number(ordered.toFixed(3)), poppler: a.length, ours: b.length })
    }
  }
  rows.push(row)
}
if (out !== undefined) writeFileSync(out, rows.map((row) => JSON.stringify(row)).join('\n') + '\n')
const share = (n) => `${n} (${(100 * n / Math.max(1, totals.pages)).toFixed(1)} %)`
console.log(`plugin ${plugin}`)
console.log(`${totals.files} files, ${totals.pages} pages compared (first ${PAGES} of each file pdftotext reads), ${((performance.now() - started) / 1000).toFixed(0)} s`)
console.log(`pages agreeing (similarity >= ${SIMILAR}): by characters ${share(totals.chars)}, in order ${share(totals.ordered)}`)
console.log(`of the ${totals.withText} pages where pdftotext finds text: ${totals.withTextChars} (${(100 * totals.withTextChars / Math.max(1, totals.withText)).toFixed(1)} %) agree by characters`)
console.log(`pages empty here but not in pdftotext: ${totals.ourEmpty}; empty in pdftotext only: ${totals.theirEmpty}; empty in both: ${totals.bothEmpty}`)
console.log(`files: refused here only ${totals.ourErrors}, by pdftotext only ${totals.theirErrors}, by both ${totals.bothErrors}; errors without the path (raw): ${totals.rawErrors}; files that stalled or killed the host: ${totals.hostFailures}; read as another kind (text, image): ${totals.notPdf}`)
process.exit(0)
