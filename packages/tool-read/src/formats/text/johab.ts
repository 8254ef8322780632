/** A streaming Johab (KS X 1001 annex 3) decoder: Hangul from its bit fields, symbols and Hanja mapped onto EUC-KR (no library has one). */

import iconv from 'iconv-lite'

/** 5-bit field values to jamo indexes (-1: fill, undefined: not valid). */
const INITIAL: (number | undefined)[] = [undefined, -1, ...Array.from({ length: 19 }, (_, i) => i)]
const MEDIAL: (number | undefined)[] = [undefined, undefined, -1, 0, 1, 2, 3, 4, undefined, undefined, 5, 6, 7, 8, 9, 10,
  undefined, undefined, 11, 12, 13, 14, 15, 16, undefined, undefined, 17, 18, 19, 20]
const FINAL: (number | undefined)[] = [
  undefined, 0, ...Array.from({ length: 16 }, (_, i) => i + 1), undefined, ...Array.from({ length: 11 }, (_, i) => i + 17),
]

function hangul(code: number): string {
  const initial = INITIAL[(code >> 10) & 0x1f]
  const medial = MEDIAL[(code >> 5) & 0x1f]
  const final = FINAL[code & 0x1f]
  if (initial === undefined || medial === undefined || final === undefined || initial < 0 || medial < 0) return '\uFFFD'
  return String.fromCharCode(0xac00 + (initial * 21 + medial) * 28 + final)
}

/** A symbol or Hanja pair as the KS X 1001 character it encodes (two Johab trail ranges cover two 94-cell rows). */
function symbol(lead: number, trail: number): string {
  const row = lead >= 0xd9 && lead <= 0xde ? 0xa1 + (lead - 0xd9) * 2 : lead >= 0xe0 && lead <= 0xf9 ? 0xca + (lead - 0xe0) * 2 : 0
  const cell = trail >= 0x31 && trail <= 0x7e ? trail - 0x31 : trail >= 0x91 && trail <= 0xfe ? trail - 0x91 + 78 : -1
  if (row === 0 || cell < 0) return '\uFFFD'
  const [eucRow, eucCell] = cell < 94 ? [row, cell] : [row + 1, cell - 94]
  return (KS_X_1001 ??= ksx1001())[(eucRow - 0xa1) * 94 + eucCell] ?? '\uFFFD'
}

/** KS X 1001's 94 × 94 cells as EUC-KR decodes them, built once on the first symbol (a decode per character cost ~1 µs each). */
let KS_X_1001: string[] | undefined
function ksx1001(): string[] {
  const cells: string[] = []
  for (let row = 0xa1; row <= 0xfe; row++) {
    for (let cell = 0xa1; cell <= 0xfe; cell++) cells.push(iconv.decode(Buffer.from([row, cell]), 'euc-kr'))
  }
  return cells
}

export class JohabDecoder {
  private lead: number | undefined

  write(chunk: Uint8Array): string {
    let out = ''
    for (const byte of chunk) {
      const lead = this.lead
      if (lead !== undefined) {
        this.lead = undefined
        out += lead <= 0xd3 ? hangul((lead << 8) | byte) : symbol(lead, byte)
      } else if (byte < 0x80) {
        out += String.fromCharCode(byte)
      } else if ((byte >= 0x84 && byte <= 0xd3) || (byte >= 0xd8 && byte <= 0xf9)) {
        this.lead = byte
      } else {
        out += '\uFFFD'
      }
    }
    return out
  }

  end(): string {
    const pending = this.lead !== undefined
    this.lead = undefined
    return pending ? '\uFFFD' : ''
  }
}
