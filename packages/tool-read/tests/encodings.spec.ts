/**
 * Text in other encodings, on real files: the rendered text and value name the encoding, a
 * legacy read is not observed (the host's edit would save UTF-8), an `encoding` argument
 * overrides detection, and blank optional arguments count as absent.
 */
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import iconv from 'iconv-lite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execTool, textOf, type Host } from '@gencode-ai/testkit'
import { readHost } from './harness.ts'

let host: Host
const observed: string[] = []
beforeAll(async () => {
  host = await readHost()
  host.ctx.on('fs/observed', (target) => { observed.push(target.displayPath) })
})
afterAll(async () => { await host.dispose() })

async function read(name: string, content: Buffer, args: Record<string, unknown> = {}) {
  await writeFile(join(host.cwd, name), content)
  observed.length = 0
  const result = await execTool(host.ctx, 'read_file', { file_path: name, ...args })
  const value = result.isError ? undefined : result.value as Record<string, unknown>
  return { text: textOf(result), value, observed: observed.length > 0 }
}

const note = (name: string) => `(Decoded from ${name}. Edits must keep this encoding: edit/write would save UTF-8.)`
const guessNote = (name: string, others: unknown) => {
  const pass = Array.isArray(others) && others.length > 0 ? `encoding ${others.map((other) => `"${String(other)}"`).join(' or ')}` : 'the file\'s encoding as encoding'
  return `(Decoded from ${name}, a guess: if the text looks garbled, pass ${pass}. Edits must keep this encoding: edit/write would save UTF-8.)`
}
/** Python's codecs, for the encodings iconv-lite cannot write. */
const pyEncode = (text: string, codec: string) => execFileSync('python3', ['-c', 'import sys; sys.stdout.buffer.write(sys.stdin.read().encode(sys.argv[1]))', codec], { input: text })

describe('legacy encodings are detected and named', () => {
  const cases: [string, string, string, string][] = [
    ['gbk.c', 'gbk', '// 这是一个中文注释，用于测试编码检测。\nconst 名字 = "张三"; // 用户名称\n', 'GB18030'],
    ['big5.txt', 'big5', '這是一個繁體中文的檔案，用於測試編碼偵測功能。\n第二行：臺灣的資料。\n', 'Big5'],
    ['sjis.txt', 'shift_jis', 'これは日本語のテキストです。文字コードの検出をテストします。\n二行目：東京都\n', 'Shift_JIS'],
    ['eucjp.txt', 'euc-jp', 'これは日本語のテキストです。文字コードの検出をテストします。\n二行目：東京都\n', 'EUC-JP'],
    ['euckr.txt', 'euc-kr', '이것은 한국어 텍스트입니다. 인코딩 감지를 테스트합니다.\n두 번째 줄: 서울특별시\n', 'EUC-KR'],
  ]
  for (const [name, encoding, content, detected] of cases) {
    it(`${name}: decoded from ${detected}, named, and not observed`, async () => {
      const lines = content.trimEnd().split('\n')
      const { text, value, observed: seen } = await read(name, iconv.encode(content, encoding))
      expect(text).toBe(`${lines.map((line, i) => `${i + 1}\t${line}`).join('\n')}\n\n${note(detected)}`)
      expect(value).toMatchObject({ kind: 'text', encoding: detected, lines, total_lines: lines.length, total_exact: true })
      expect(seen).toBe(false)
    })
  }

  it('a few characters are only a guess: decoded, said to be a guess, and the likely encodings named', async () => {
    for (const [name, encoding, content] of [['short-gbk.txt', 'gbk', '你好，世界\n'], ['latin.txt', 'windows-1252', 'café crème — 5 € and it’s “quoted”\n'], ['cafe.txt', 'windows-1252', 'café crème\n']]) {
      const { text, value, observed: seen } = await read(name!, iconv.encode(content!, encoding!))
      expect(value?.lines).toEqual([content!.trimEnd()])
      expect(value?.alternatives).toEqual(expect.any(Array))
      expect(text).toBe(`1\t${content!.trimEnd()}\n\n${guessNote(String(value?.encoding), value?.alternatives)}`)
      expect(seen).toBe(false)
    }
  })

  it('windows-1252 € and ’ come out right (not as Node\'s TextDecoder gives them)', async () => {
    const { value } = await read('euro.txt', Buffer.from([0x80, 0x20, 0x92, 0x0a]), { encoding: 'windows-1252' })
    expect(value?.lines).toEqual(['€ ’'])
  })

  it('offset, limit, the footer and the exact total work as for UTF-8, and the note follows the footer', async () => {
    const content = Array.from({ length: 30 }, (_, i) => `第${i + 1}行：中文内容`).join('\r\n')
    // Repeated lines keep the detector's confidence low; its margin over every other reading makes it sure.
    const { text } = await read('paged.txt', iconv.encode(content, 'gbk'), { offset: 11, limit: 3 })
    expect(text).toBe(`11\t第11行：中文内容\n12\t第12行：中文内容\n13\t第13行：中文内容\n\n(Showing lines 11-13 of 30. Use offset=14 to continue.)\n\n${note('GB18030')}`)
  })
})

describe('Unicode by BOM', () => {
  it('UTF-16 LE and BE: decoded with no note, and observed as before', async () => {
    const le = await read('le.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('α\nβ\n', 'utf16le')]))
    expect(le).toMatchObject({ text: '1\tα\n2\tβ', observed: true })
    expect(le.value?.encoding).toBe('utf-16le')
    const be = await read('be.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('α\nβ\n', 'utf16le').swap16()]))
    expect(be).toMatchObject({ text: '1\tα\n2\tβ', observed: true })
  })

  it('UTF-32 LE (BOM FF FE 00 00) is UTF-32, not UTF-16 full of NULs; BE too', async () => {
    for (const [name, encoding, label] of [['le32.txt', 'utf-32le', 'UTF-32LE'], ['be32.txt', 'utf-32be', 'UTF-32BE']] as const) {
      const { text, value, observed: seen } = await read(name, iconv.encode('héllo\n漢😀\n', encoding, { addBOM: true }))
      expect(text).toBe(`1\théllo\n2\t漢😀\n\n${note(label)}`)
      expect(value?.encoding).toBe(encoding)
      expect(seen).toBe(false)
    }
  })

  it('UTF-8 with a BOM: stripped, observed, no note', async () => {
    expect(await read('bom8.txt', Buffer.from('\uFEFFok\n'))).toMatchObject({ text: '1\tok', observed: true })
  })
})

describe('the encoding argument', () => {
  it('overrides detection', async () => {
    const bytes = iconv.encode('中文\n', 'big5')
    const { text, value } = await read('forced.txt', bytes, { encoding: 'big5' })
    expect(text).toBe(`1\t中文\n\n${note('big5')}`)
    expect(value?.encoding).toBe('big5')
  })

  it('utf-8 always decodes: bytes that are not UTF-8 show as U+FFFD, the note names the first line holding one, no observation', async () => {
    expect(await read('u.txt', Buffer.from('é\n'), { encoding: 'UTF-8' })).toMatchObject({ text: '1\té', observed: true })
    const bad = await read('notu.txt', Buffer.from('ok\n\xe9 x\n', 'latin1'), { encoding: 'utf8' })
    expect(bad.text).toBe('1\tok\n2\t\uFFFD x\n\n(Bytes that are not UTF-8 are shown as \uFFFD, the first on line 2; edit/write would not keep them.)')
    expect(bad.value).toMatchObject({ encoding: 'utf-8', first_invalid_line: 2 })
    expect(bad.observed).toBe(false)
  })

  it('an unknown label is an error naming encoding; on a PDF or an image it does not apply', async () => {
    expect((await read('x.txt', Buffer.from('x\n'), { encoding: 'klingon' })).text)
      .toBe('Error: encoding "klingon" is not an encoding read_file knows; use a label such as gbk, big5, shift_jis, euc-jp, euc-kr, windows-1251, koi8-r or utf-16le, or omit it to detect')
    // Known encodings no decoder here reads are refused by name.
    expect((await read('x.txt', Buffer.from('x\n'), { encoding: 'EUC-TW' })).text)
      .toBe('Error: encoding "EUC-TW": read_file cannot decode EUC-TW; convert the file to UTF-8 first (iconv -f EUC-TW -t UTF-8)')
    expect((await read('x.txt', Buffer.from('x\n'), { encoding: 'iso-2022-kr' })).text).toMatch(/^Error: encoding "iso-2022-kr": read_file cannot decode ISO-2022-KR;/)
    expect((await read('doc', Buffer.from('%PDF-1.4\n'), { encoding: 'gbk' })).text)
      .toBe(`Error: encoding applies to text files; "${join(host.cwd, 'doc')}" is a PDF — omit encoding`)
  })
})

describe('blank optional arguments count as absent', () => {
  it('"" and null for offset, limit, encoding and pages read as if they were not sent', async () => {
    const content = Buffer.from('a\nb\n')
    const plain = await read('blank.txt', content)
    for (const blank of ['', null]) {
      const sent = await read('blank.txt', content, { offset: blank, limit: blank, encoding: blank, pages: blank })
      expect(sent.text).toBe(plain.text)
    }
    expect(plain.text).toBe('1\ta\n2\tb')
  })

  it('a present, wrong value is still an error', async () => {
    expect((await read('blank.txt', Buffer.from('a\n'), { offset: 'x' })).text).toMatch(/^Error: invalid arguments: .*offset/)
  })
})

describe('binary stays binary', () => {
  it('UTF-8 with a stray byte is not garbled as a legacy encoding: U+FFFD, and the note names its line', async () => {
    const content = Buffer.concat([Buffer.from('résumé café naïve 中文\n'.repeat(20)), Buffer.from([0xe9, 0x0a])])
    const { text, value, observed: seen } = await read('stray.txt', content)
    expect(text).toMatch(/\n21\t\uFFFD\n\n\(Bytes that are not UTF-8 are shown as \uFFFD, the first on line 21; edit\/write would not keep them\.\)$/)
    expect(value).toMatchObject({ encoding: 'utf-8', first_invalid_line: 21, total_lines: 21 })
    expect(seen).toBe(false)
    expect((await read('stray.txt', content, { encoding: 'latin1' })).value?.encoding).toBe('latin1')
  })

  it('a blob with NULs, 128 bytes of 0x80 (no text is one repeated symbol), mostly controls', async () => {
    expect((await read('blob.bin', Buffer.from([0x89, 0x00, 0xff, 0x00, 0x10, 0x00]))).text).toMatch(/binary file/)
    expect((await read('euros.bin', Buffer.alloc(128, 0x80))).text).toMatch(/^Error: cannot read ".*euros\.bin": binary file \(NUL bytes, or text in no encoding/)
    const controls = Buffer.from(Array.from({ length: 600 }, (_, i) => [0x01, 0x02, 0x1c, 0x81, 0xc3, 0x9a, 0x7f][i % 7]!))
    expect((await read('controls.bin', controls)).text).toMatch(/binary file/)
  })
})

describe('detection by language', () => {
  const russian = 'В гимназии он не был первым учеником, но учителя его любили за живой ум и доброе сердце. Каждое утро он шёл через старый парк, где под липами сидели старики и читали газеты. Летом семья уезжала в деревню, и там он целыми днями пропадал на реке, ловил рыбу и слушал рассказы деда о войне.'
  const greek = 'Η Ελλάδα είναι μια χώρα της νοτιοανατολικής Ευρώπης με πλούσια ιστορία. Οι αρχαίοι φιλόσοφοι συζητούσαν στην αγορά της Αθήνας για τη δικαιοσύνη, την ομορφιά και την αλήθεια. Σήμερα οι επισκέπτες θαυμάζουν τα μνημεία και κολυμπούν στα καθαρά νερά του Αιγαίου.'
  const hebrew = 'ירושלים היא עיר עתיקה ששימשה מרכז דתי ותרבותי במשך אלפי שנים. ברחובות העיר העתיקה אפשר לשמוע שפות רבות, ולראות אנשים מכל קצוות העולם. בערב השמש שוקעת מאחורי ההרים והאבנים מקבלות גוון זהוב.'
  const czech = 'Praha je hlavní město České republiky a leží na řece Vltavě. Staré Město s orlojem a Karlův most přitahují každý rok miliony turistů. V zimě je ve městě klid, lidé pijí horký čaj v kavárnách a děti se kloužou na zamrzlých rybnících.'
  const thai = 'ประเทศไทยเป็นประเทศในเอเชียตะวันออกเฉียงใต้ มีประวัติศาสตร์และวัฒนธรรมที่ยาวนาน อาหารไทยมีชื่อเสียงไปทั่วโลก เช่น ต้มยำกุ้งและผัดไทย ทุกปีนักท่องเที่ยวจำนวนมากมาเที่ยวชมวัดและชายหาดที่สวยงาม'
  // [label written, text, name read back]: a sure note unless the value says it is a guess (then the guess note names the rivals).
  const cases: [string, string, string][] = [
    ['windows-1251', russian, 'windows-1251'], ['koi8-r', russian, 'KOI8-R'], ['ibm866', russian, 'IBM866'],
    ['iso-8859-5', russian, 'ISO-8859-5'], ['ibm855', russian, 'IBM855'], ['maccyrillic', russian, 'MacCyrillic'],
    ['iso-8859-7', greek, 'ISO-8859-7'], ['windows-1253', greek, 'windows-1253'], ['windows-1255', hebrew, 'windows-1255'],
    ['windows-1250', czech, 'windows-1250'], ['iso-8859-2', czech, 'ISO-8859-2'],
    ['tis-620', thai, 'windows-874'],
  ]
  for (const [label, sentence, name] of cases) {
    it(`${label}: read back as ${name} with the text exact, or said to be a guess that names ${name}`, async () => {
      const lines = [sentence, sentence.toUpperCase(), sentence]
      const { text, value, observed: seen } = await read(`${label}.txt`, iconv.encode(`${lines.join('\n')}\n`, label))
      const alternatives = value?.alternatives as string[] | undefined
      if (alternatives === undefined || value?.encoding === name) expect(value).toMatchObject({ encoding: name, lines, total_exact: true })
      else expect(alternatives).toContain(name)
      const expected = alternatives === undefined ? note(name) : guessNote(String(value?.encoding), alternatives)
      expect(text.endsWith(`\n\n${expected}`)).toBe(true)
      expect(seen).toBe(false)
    })
  }

  it('sure where one reading stands out: the Cyrillic code pages, Greek, Hebrew, Thai', async () => {
    for (const [label, sentence] of [['windows-1251', russian], ['koi8-r', russian], ['ibm866', russian], ['iso-8859-5', russian], ['ibm855', russian], ['iso-8859-7', greek], ['windows-1255', hebrew], ['tis-620', thai]] as const) {
      const { value } = await read(`sure-${label}.txt`, iconv.encode(`${sentence}\n`, label))
      expect(value?.alternatives, label).toBeUndefined()
      expect(value?.lines, label).toEqual([sentence])
    }
  })

  it('UTF-16 and UTF-32 without a BOM, by their NUL pattern: UTF-16 read as before (observed), UTF-32 named', async () => {
    for (const [encoding, note16] of [['utf-16le', ''], ['utf-16be', ''], ['utf-32le', note('UTF-32LE')], ['utf-32be', note('UTF-32BE')]] as const) {
      for (const content of ['hello world, plain ASCII\nsecond line\n', `${russian}\n`]) {
        const { text, value, observed: seen } = await read(`${encoding}.txt`, iconv.encode(content, encoding))
        const lines = content.trimEnd().split('\n')
        expect(value, encoding).toMatchObject({ encoding, lines })
        expect(text).toBe(`${lines.map((line, i) => `${i + 1}\t${line}`).join('\n')}${note16 === '' ? '' : `\n\n${note16}`}`)
        expect(seen).toBe(encoding.startsWith('utf-16'))
      }
    }
    // Without ASCII there is no NUL pattern: a guess, said even for UTF-16.
    const japanese = 'これは日本語のテキストです。文字コードの検出をテストします。'
    const { text, value } = await read('ja16.txt', iconv.encode(`${japanese}\n`, 'utf-16le'))
    expect(value).toMatchObject({ encoding: 'utf-16le', lines: [japanese], alternatives: [] })
    expect(text).toBe(`1\t${japanese}\n\n(Decoded from UTF-16LE, a guess: if the text looks garbled, pass the file's encoding as encoding.)`)
  })

  it('ISO-2022-JP (7-bit, so it passes as UTF-8) is decoded by its escapes; Johab is detected and decoded; ISO-2022-KR is refused by name', async () => {
    const japanese = 'これは日本語のテキストです。文字コードの検出をテストします。\n東京都の天気は晴れです。\n'
    const jis = await read('jis.txt', pyEncode(japanese, 'iso2022_jp'))
    expect(jis.text).toBe(`1\tこれは日本語のテキストです。文字コードの検出をテストします。\n2\t東京都の天気は晴れです。\n\n${note('ISO-2022-JP')}`)
    const korean = '서울은 대한민국의 수도이며 한강을 따라 펼쳐진 큰 도시입니다. 봄에는 벚꽃이 피고 가을에는 단풍이 아름답습니다. 漢字 ※ ①\n'
    const johab = await read('johab.txt', pyEncode(korean, 'johab'))
    expect(johab.text).toBe(`1\t${korean.trimEnd()}\n\n${note('Johab')}`)
    expect((await read('johab.txt', pyEncode(korean, 'johab'), { encoding: 'JOHAB' })).value?.lines).toEqual([korean.trimEnd()])
    expect((await read('kr.txt', pyEncode(korean, 'iso2022_kr'))).text).toMatch(/^Error: cannot read ".*kr\.txt": it looks like ISO-2022-KR text, which read_file cannot decode/)
  })
})
