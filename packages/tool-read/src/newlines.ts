/**
 * Counting the lines of decoded text that nobody will see, and the UTF-8 size of that text, in
 * one pass. On the provider path a window near the end of a file has every line before it only
 * counted: one String#indexOf call per line (~11 ns, 28.6M lines in a 1 GiB log) plus a
 * Buffer.byteLength pass for the byte total took about 330 ms per GiB of main-thread time.
 * Here TextEncoder.encodeInto copies the text into WebAssembly memory (its UTF-8 size comes
 * back as `written`) and a SIMD loop counts the 0x0A bytes 16 at a time: about 150 ms per GiB.
 * In UTF-8 a 0x0A byte is only ever U+000A, so the count is exact for any text.
 */

export interface NewlineCount {
  newlines: number
  /** UTF-8 bytes of the counted text (what Buffer.byteLength reports). */
  bytes: number
}

/** Newlines in `text` from index `from` on, and the UTF-8 size of that part. */
export type NewlineCounter = (text: string, from: number) => NewlineCount

/**
 * The module, assembled by hand (no toolchain needed to build it). Its text form:
 *
 *   (module
 *     (memory (export "memory") 4)                       ;; 256 KiB: one encodeInto piece
 *     (func (export "count") (param $len i32) (result i32)
 *       (local $i i32) (local $n i32) (local $end i32)
 *       (local.set $end (i32.and (local.get $len) (i32.const -16)))
 *       (block $done (loop $blocks                       ;; 16 bytes per step
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
 *         (local.set $n (i32.add (local.get $n) (i32.popcnt (i8x16.bitmask
 *           (i8x16.eq (v128.load (local.get $i)) (i8x16.splat (i32.const 10)))))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 16)))
 *         (br $blocks)))
 *       (block $done (loop $bytes                        ;; the last 0-15 bytes
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
 *         (local.set $n (i32.add (local.get $n) (i32.eq (i32.load8_u (local.get $i)) (i32.const 10))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $bytes)))
 *       (local.get $n)))
 */
const PAGES = 4
const BODY = [
  0x01, 0x03, 0x7f, // three i32 locals: $i (1), $n (2), $end (3)
  0x20, 0x00, 0x41, 0x70, 0x71, 0x21, 0x03, // $end = $len & -16
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x01, 0x20, 0x03, 0x4f, 0x0d, 0x01, // br_if $done ($i >= $end)
  0x20, 0x02, // $n
  0x20, 0x01, 0xfd, 0x00, 0x00, 0x00, // v128.load [$i]
  0x41, 0x0a, 0xfd, 0x0f, // i8x16.splat 10
  0xfd, 0x23, 0xfd, 0x64, 0x69, // i8x16.eq, i8x16.bitmask, i32.popcnt
  0x6a, 0x21, 0x02, // $n += …
  0x20, 0x01, 0x41, 0x10, 0x6a, 0x21, 0x01, // $i += 16
  0x0c, 0x00, 0x0b, 0x0b, // br $blocks, end, end
  0x02, 0x40, 0x03, 0x40, // block, loop
  0x20, 0x01, 0x20, 0x00, 0x4f, 0x0d, 0x01, // br_if $done ($i >= $len)
  0x20, 0x02, 0x20, 0x01, 0x2d, 0x00, 0x00, 0x41, 0x0a, 0x46, 0x6a, 0x21, 0x02, // $n += [$i] == 10
  0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, // $i += 1
  0x0c, 0x00, 0x0b, 0x0b, // br $bytes, end, end
  0x20, 0x02, 0x0b, // $n, end
]
const section = (id: number, bytes: number[]): number[] => [id, bytes.length, ...bytes]
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
  ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f]), // type: (i32) -> i32
  ...section(3, [0x01, 0x00]), // one function of that type
  ...section(5, [0x01, 0x00, PAGES]), // memory: PAGES pages, no maximum
  ...section(7, [0x02, 0x06, ...ascii('memory'), 0x02, 0x00, 0x05, ...ascii('count'), 0x00, 0x00]),
  ...section(10, [0x01, BODY.length, ...BODY]),
])

function ascii(name: string): number[] {
  return [...name].map((char) => char.charCodeAt(0))
}

/** The slice of the WebAssembly API used here (the project's TS lib has no DOM types). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }, count: (length: number) => number } }
}

/** The SIMD counter, or undefined where WebAssembly (or its SIMD) is unavailable. */
export function wasmCounter(): NewlineCounter | undefined {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly
  if (wasm === undefined || !wasm.validate(MODULE)) return undefined
  const { memory, count } = new wasm.Instance(new wasm.Module(MODULE)).exports
  const bytes = new Uint8Array(memory.buffer)
  const encoder = new TextEncoder()
  return (text, from) => {
    let rest = from === 0 ? text : text.slice(from)
    let newlines = 0
    let size = 0
    // Text bigger than the memory goes in pieces; encodeInto never splits a character.
    for (;;) {
      const { read, written } = encoder.encodeInto(rest, bytes)
      newlines += count(written)
      size += written
      if (read >= rest.length) return { newlines, bytes: size }
      rest = rest.slice(read)
    }
  }
}

/** The same count in plain script: the fallback, and the reference the tests hold both to. */
export const scriptCounter: NewlineCounter = (text, from) => {
  let newlines = 0
  for (let at = text.indexOf('\n', from); at !== -1; at = text.indexOf('\n', at + 1)) newlines += 1
  return { newlines, bytes: Buffer.byteLength(from === 0 ? text : text.slice(from), 'utf8') }
}

export const countNewlines: NewlineCounter = wasmCounter() ?? scriptCounter
