/**
 * Text in other encodings, on real files: the rendered text and value name the encoding, a
 * legacy read is not observed (the host's edit would save UTF-8), an `encoding` argument
 * overrides detection, and blank optional arguments count as absent.
 */
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

describe('legacy encodings are detected and named', () => {
  const cases: [string, string, string, string][] = [
    ['gbk.c', 'gbk', '// 这是一个中文注释，用于测试编码检测。\nconst 名字 = "张三"; // 用户名称\n', 'GB18030'],
    ['short-gbk.txt', 'gbk', '你好，世界\n', 'GB18030'],
    ['big5.txt', 'big5', '這是一個繁體中文的檔案，用於測試編碼偵測功能。\n第二行：臺灣的資料。\n', 'Big5'],
    ['sjis.txt', 'shift_jis', 'これは日本語のテキストです。文字コードの検出をテストします。\n二行目：東京都\n', 'Shift_JIS'],
    ['eucjp.txt', 'euc-jp', 'これは日本語のテキストです。文字コードの検出をテストします。\n二行目：東京都\n', 'EUC-JP'],
    ['euckr.txt', 'euc-kr', '이것은 한국어 텍스트입니다. 인코딩 감지를 테스트합니다.\n두 번째 줄: 서울특별시\n', 'EUC-KR'],
    ['latin.txt', 'windows-1252', 'café crème — 5 € and it’s “quoted”\n', 'windows-1252'],
    ['cafe.txt', 'windows-1252', 'café crème\n', 'windows-1252'],
  ]
  for (const [name, encoding, content, detected] of cases) {
    it(`${name}: decoded from ${detected}, named, and not observed`, async () => {
      const lines = content.trimEnd().split('\n')
      const { text, value, observed: seen } = await read(name, iconv.encode(content, encoding))
      expect(text).toBe(`${lines.map((line, i) => `${i + 1}\t${line}`).join('\n')}\n\n${note(detected)}`)
      expect(value).toMatchObject({ kind: 'text', encoding: detected, lines, totalLines: lines.length, totalExact: true })
      expect(seen).toBe(false)
    })
  }

  it('windows-1252 € and ’ come out right (not as Node\'s TextDecoder gives them)', async () => {
    const { value } = await read('euro.txt', Buffer.from([0x80, 0x20, 0x92, 0x0a]), { encoding: 'windows-1252' })
    expect(value?.lines).toEqual(['€ ’'])
  })

  it('offset, limit, the footer and the exact total work as for UTF-8, and the note follows the footer', async () => {
    const content = Array.from({ length: 30 }, (_, i) => `第${i + 1}行：中文内容`).join('\r\n')
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

  it('utf-8 keeps the strict UTF-8 read', async () => {
    expect((await read('u.txt', Buffer.from('é\n'), { encoding: 'UTF-8' })).text).toBe('1\té')
    expect((await read('notu.txt', Buffer.from([0xe9, 0x0a]), { encoding: 'utf8' })).text).toMatch(/^Error: cannot read ".*notu\.txt": binary file/)
  })

  it('an unknown label is an error naming encoding; on a PDF or an image it does not apply', async () => {
    expect((await read('x.txt', Buffer.from('x\n'), { encoding: 'klingon' })).text)
      .toBe('Error: encoding "klingon" is not an encoding read_file knows; use a label such as gbk, big5, shift_jis, euc-jp, euc-kr, windows-1252 or utf-16le, or omit it to detect')
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
  it('UTF-8 with a stray byte is not garbled as a legacy encoding', async () => {
    const content = Buffer.concat([Buffer.from('résumé café naïve 中文\n'.repeat(20)), Buffer.from([0xe9, 0x0a])])
    expect((await read('stray.txt', content)).text).toMatch(/^Error: cannot read ".*stray\.txt": binary file \(NUL bytes, or text in no encoding read_file recognises — pass encoding if you know it\)/)
    expect((await read('stray.txt', content, { encoding: 'latin1' })).value?.encoding).toBe('latin1')
  })

  it('NUL-heavy content without a BOM (UTF-16 without BOM, a blob)', async () => {
    expect((await read('nobom.txt', Buffer.from('hello\n', 'utf16le'))).text).toMatch(/binary file/)
    expect((await read('blob.bin', Buffer.from([0x89, 0x00, 0xff, 0x00, 0x10, 0x00]))).text).toMatch(/binary file/)
  })
})
