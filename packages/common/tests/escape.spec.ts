import { describe, expect, it } from 'vitest'
import { echo, escapeName, escapeText, fsPath, nameFromBytes, unescapeName } from '../src/escape.ts'

describe('escapeName', () => {
  it('leaves ordinary names alone, backslashes and emoji included', () => {
    for (const name of ['README.md', 'a\\b', 'café', '日本語.txt', '😀.png', '']) expect(escapeName(name)).toBe(name)
  })

  it('escapes controls, separators, bidi, box drawing and raw bytes; doubles a backslash only beside them', () => {
    expect(escapeName('evil\nFILE   999999 B  injected.txt')).toBe('evil\\x0aFILE   999999 B  injected.txt')
    expect(escapeName('\x1b[2J\x1b]0;title\x07\r')).toBe('\\x1b[2J\\x1b]0;title\\x07\\x0d')
    expect(escapeName('d\n└── fake_child.txt')).toBe('d\\x0a\\u{2514}\\u{2500}\\u{2500} fake_child.txt')
    expect(escapeName('a\u0085b\u2028c\u202ed\u2066e\x7f')).toBe('a\\u{85}b\\u{2028}c\\u{202e}d\\u{2066}e\\x7f')
    expect(escapeName('x\\y\t')).toBe('x\\\\y\\x09')
    expect(escapeName(nameFromBytes(Buffer.from([0x61, 0xff, 0xc3, 0x28])))).toBe('a\\xff\\xc3(')
    expect(escapeName('\ud800')).toBe('\\u{d800}')
  })
})

describe('escapeText', () => {
  it('leaves text alone: lines, tabs, backslashes, box drawing; a CRLF end becomes LF', () => {
    for (const text of ['a\\b\n', 'col\tcol\n├── dir\n', '日本語 café 😀', '']) expect(escapeText(text)).toBe(text)
    expect(escapeText('one\r\ntwo\r\n')).toBe('one\ntwo\n')
  })

  it('escapes ESC, BEL, a lone CR, NUL, DEL, C1, separators and bidi controls; doubles a backslash only beside them', () => {
    expect(escapeText('\x1b[31mred\x1b[0m\x07 10%\r50%\r\n')).toBe('\\x1b[31mred\\x1b[0m\\x07 10%\\x0d50%\n')
    expect(escapeText('a\u0000b\x7fc\u0085d\u2028e\u202ef\ufeff')).toBe('a\\x00b\\x7fc\\u{85}d\\u{2028}e\\u{202e}f\\u{feff}')
    expect(escapeText('C:\\dir\x1b')).toBe('C:\\\\dir\\x1b')
  })
})

describe('unescapeName', () => {
  it('inverts escapeName for every escaped name', () => {
    const names = ['evil\nrow', 'x\\y\t', 'd\n└── c', 'a\u0085\u202e', nameFromBytes(Buffer.from([0x66, 0x80, 0xfe, 0xed, 0xa0, 0x80, 0xf0, 0x9f]))]
    for (const name of names) expect(unescapeName(escapeName(name))).toBe(name)
  })

  it('is undefined without an escape, and keeps a stray backslash literal', () => {
    expect(unescapeName('plain/name')).toBeUndefined()
    expect(unescapeName('a\\q\\x41')).toBe('a\\qA')
    expect(unescapeName('\\u{d800}\\x41')).toBe('\\u{d800}A')
  })
})

describe('bytes', () => {
  it('keeps each invalid byte and decodes valid UTF-8 around it', () => {
    const bytes = Buffer.from([0xe6, 0x97, 0xa5, 0xff, 0x2e, 0xe2, 0x82, 0x74, 0xc0, 0xaf])
    const name = nameFromBytes(bytes)
    expect(name.startsWith('日')).toBe(true)
    expect(fsPath(name)).toEqual(bytes)
    expect(fsPath('plain')).toBe('plain')
    expect(nameFromBytes(Buffer.from('a\ufffdb'))).toBe('a\ufffdb')
  })
})

describe('echo', () => {
  it('quotes, escapes and cuts, saying the full length', () => {
    expect(echo('a\nb')).toBe('"a\\x0ab"')
    expect(echo('x'.repeat(60_000))).toBe(`"${'x'.repeat(120)}…" (60000 characters)`)
  })
})
