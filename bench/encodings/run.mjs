// read_file encoding accuracy over chardet's test corpus (a folder per encoding, e.g. windows-1251-russian/).
// Ground truth: each file decoded as its folder says with Python's codecs (glibc iconv for EUC-TW, which
// Python lacks); where vendors' tables differ (Shift_JIS/cp932 map 0x8160 to 〜 or ～), any of the
// encoding's usual variants counts, and so does the WHATWG decoding of its label (Node's TextDecoder).
// Each file is read whole through read_file on the product composition (dsh-sandbox-policy
// workspace-write + dsh-fs-sandbox) and counted right when its lines equal the truth's (line endings aside).
// Usage: node bench/encodings/run.mjs <corpus-dir>   (e.g. chardet's tests/; needs the built package)
// Prints per-encoding and per-family rows: right / files, and how the wrong ones were answered
// (sure: a wrong decode with a sure note; guess: a wrong decode that says it is a guess; refused: an error),
// and how many right ones said they were a guess.
import { spawnSync } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { CallId } from '@deepseek-ai/dsh-llm'
import { bootServices } from '@gencode-ai/testkit'
import * as Read from '../../packages/tool-read/dist/index.js'

const corpus = process.argv[2]
if (corpus === undefined) {
  console.error('usage: node bench/encodings/run.mjs <corpus-dir>')
  process.exit(2)
}
const root = realpathSync(corpus)

/** Python: folder -> codec (the folder's encoding, its language suffix dropped), every file decoded, as JSON. */
const TRUTH = String.raw`
import codecs, json, os, subprocess, sys
root = sys.argv[1]
out = {}
VARIANTS = {
    'shift_jis': ['cp932', 'shift_jis_2004'], 'cp932': ['shift_jis'], 'euc_jp': ['euc_jis_2004'],
    'big5': ['cp950', 'big5hkscs'], 'gb2312': ['gbk', 'gb18030'], 'euc_kr': ['cp949'],
    'latin-1': ['cp1252'], 'iso8859-9': ['cp1254'], 'tis-620': ['cp874'], 'cp1255': ['iso8859-8'],
}
for folder in sorted(os.listdir(root)):
    path = os.path.join(root, folder)
    if not os.path.isdir(path):
        continue
    parts = folder.split('-')
    name = folder
    while True:
        try:
            codecs.lookup(name); break
        except LookupError:
            if name.upper() == 'EUC-TW' or '-' not in name: break
            name = name.rsplit('-', 1)[0]
    codec = codecs.lookup(name).name if name.upper() != 'EUC-TW' else 'euc-tw'
    variants = [name] + VARIANTS.get(codec, [])
    for file in sorted(os.listdir(path)):
        data = open(os.path.join(path, file), 'rb').read()
        texts = []
        for variant in variants:
            if variant.upper() == 'EUC-TW':
                run = subprocess.run(['iconv', '-f', 'EUC-TW', '-t', 'UTF-8'], input=data, capture_output=True)
                text = run.stdout.decode('utf-8') if run.returncode == 0 else None
            else:
                try:
                    text = data.decode(variant)
                except UnicodeDecodeError:
                    text = None
            if text is not None:
                texts.append(text[1:] if text.startswith('\ufeff') else text)
        out[folder + '/' + file] = {'encoding': name, 'texts': texts}
print(json.dumps(out))
`
const truth = JSON.parse(spawnSync('python3', ['-c', TRUTH, root], { maxBuffer: 1 << 30, encoding: 'utf8' }).stdout)
for (const [file, entry] of Object.entries(truth)) {
  try {
    const text = new TextDecoder(entry.encoding.replace('_', '-'), { fatal: true }).decode(readFileSync(join(root, file)))
    entry.texts.push(text)
  } catch {
    // No WHATWG decoder for the label, or the bytes are not valid in it.
  }
}

/** Encodings grouped as the README reports them. */
const FAMILIES = [
  ['Unicode with BOM', /^(utf-8-sig|utf-16|utf-32)$/i],
  ['UTF-16/32 without BOM', /^utf-(16|32)(le|be)$/i],
  ['UTF-8, ASCII', /^(utf-8|ascii)$/i],
  ['Western', /^(iso-8859-1|windows-1252|macroman)$/i],
  ['Central European', /^(iso-8859-2|windows-1250)$/i],
  ['Cyrillic', /^(windows-1251|koi8-r|iso-8859-5|ibm855|ibm866|maccyrillic)$/i],
  ['Greek', /^iso-8859-7$/i],
  ['Turkish', /^(iso-8859-9|windows-1254)$/i],
  ['Hebrew', /^windows-1255$/i],
  ['Arabic', /^(iso-8859-6|windows-1256)$/i],
  ['Thai', /^tis-620$/i],
  ['Chinese', /^(gb2312|big5|euc-tw)$/i],
  ['Japanese', /^(shift_jis|cp932|euc-jp|iso-2022-jp)$/i],
  ['Korean', /^(euc-kr|cp949|johab|iso-2022-kr)$/i],
]
const family = (encoding) => FAMILIES.find(([, pattern]) => pattern.test(encoding))?.[0] ?? 'other'

const ctx = await bootServices({ cwd: root, sandbox: 'workspace-write' })
await ctx.plugin(Read, { maxEntries: 100_000, maxLineLength: 1_000_000, maxBytes: 1 << 30, outsideWorkspace: 'allow' })

/** Line endings and trailing blank lines aside. */
const lines = (text) => text.replace(/\r\n?/g, '\n').replace(/\n+$/, '')
const tally = new Map()
const count = (key, outcome, guessed) => {
  const row = tally.get(key) ?? { files: 0, right: 0, guessed: 0, sure: 0, guess: 0, refused: 0 }
  row.files++
  row[outcome]++
  if (outcome === 'right' && guessed) row.guessed++
  tally.set(key, row)
}
let seq = 0
const wrong = []
for (const [file, { encoding, texts }] of Object.entries(truth)) {
  const folder = file.split('/')[0]
  const result = await ctx.tools.execute({ callId: CallId(`e${++seq}`), name: 'read_file', arguments: { file_path: join(root, file) }, signal: new AbortController().signal })
  const shown = result.content.map((block) => block.text ?? '').join('')
  let outcome
  if (result.isError) outcome = 'refused'
  else if (texts.some((text) => lines(result.value.lines.join('\n')) === lines(text))) outcome = 'right'
  else outcome = /guess|not sure|unsure/i.test(shown) ? 'guess' : 'sure'
  if (outcome !== 'right') wrong.push(`${file}: ${outcome} (${result.isError ? shown.slice(0, 120) : result.value.encoding})`)
  const guessed = /a guess/.test(shown)
  count(folder, outcome, guessed)
  count(`family ${family(encoding)}`, outcome, guessed)
  count('all', outcome, guessed)
}
const format = ([key, row]) => `${key.padEnd(34)} ${String(row.right).padStart(4)} / ${String(row.files).padEnd(4)} (${row.guessed} said to be a guess)  wrong: sure ${row.sure}, guess ${row.guess}; refused ${row.refused}`
const rows = [...tally]
console.log(rows.filter(([key]) => !key.startsWith('family') && key !== 'all').sort(([a], [b]) => (a < b ? -1 : 1)).map(format).join('\n'))
console.log()
console.log(rows.filter(([key]) => key.startsWith('family')).map(format).join('\n'))
console.log(format(rows.find(([key]) => key === 'all')))
if (process.env.VERBOSE) console.log(`\n${wrong.join('\n')}`)
const missing = Object.values(truth).filter(({ texts }) => texts.length === 0).length
if (missing > 0) console.log(`(${missing} files have no ground truth: their folder's codec does not decode them)`)
await ctx.dispose?.()
process.exit(0)
