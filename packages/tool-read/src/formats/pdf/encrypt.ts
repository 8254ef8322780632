/** PDFs whose encryption covers only embedded files (/EFF, streams and strings Identity): their pages read without the password. */

/** `/Encrypt` as a key (not `/EncryptMetadata`), with its value: a reference or a direct dictionary. */
const ENCRYPT_KEY = /\/Encrypt(?![^\s/<>[\]()%{}])\s*(?:(\d+)\s+(\d+)\s+R|<<)/gu

/** The encryption dictionary's text: the object a reference names, or the direct dictionary from its `<<`. */
function dictionaryText(text: string, match: RegExpExecArray): string | undefined {
  if (match[1] === undefined) return text.slice(match.index + match[0].length - 2, match.index + 4096)
  const object = new RegExp(`(?:^|[^\\d])${match[1]}\\s+${match[2]}\\s+obj\\b`, 'gu')
  let found: RegExpExecArray | null
  let last: string | undefined
  // The last definition wins, as an incremental update's does.
  while ((found = object.exec(text)) !== null) {
    const end = text.indexOf('endobj', found.index)
    last = text.slice(found.index, end === -1 ? found.index + 4096 : end)
  }
  return last
}

function onlyAttachments(dictionary: string): boolean {
  const version = /\/V\s+(\d+)/u.exec(dictionary)
  if (version === null || Number(version[1]) < 4 || !/\/EFF\s*\//u.test(dictionary)) return false
  // Absent StmF/StrF mean Identity from V4 on; any named filter other than Identity encrypts pages.
  const identity = (key: string): boolean => {
    const value = new RegExp(`/${key}\\s*/([^\\s/<>\\[\\]()]+)`, 'u').exec(dictionary)
    return value === null || value[1] === 'Identity'
  }
  return identity('StmF') && identity('StrF')
}

/**
 * When every encryption dictionary the file names leaves streams and strings unencrypted, a copy
 * whose `/Encrypt` keys are renamed (same length, so the xref offsets hold): pdf.js then reads its
 * pages without asking for the password the attachments need. Otherwise undefined.
 */
export function withoutAttachmentEncryption(bytes: Uint8Array): Uint8Array | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
  const keys = [...text.matchAll(ENCRYPT_KEY)]
  if (keys.length === 0) return undefined
  for (const key of keys) {
    const dictionary = dictionaryText(text, key)
    if (dictionary === undefined || !onlyAttachments(dictionary)) return undefined
  }
  const copy = Uint8Array.from(bytes)
  // `/Encrypt` -> `/Encryp_`: an unknown key pdf.js ignores.
  for (const key of keys) copy[key.index + 7] = 0x5f
  return copy
}
