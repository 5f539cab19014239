/**
 * A list of texts kept as UTF-8 bytes outside the JavaScript heap: appended,
 * never changed, each read back (decoded) when asked for.
 *
 * Why: a long conversation's history is read at start-up, record by record, and
 * kept for the whole chat. Kept as strings, every piece survives V8's young
 * generation as it is read, and the collector answers that by growing the young
 * generation to its largest size: that growth, not the history, was most of
 * restore's peak memory. Bytes in Buffers are neither scanned nor moved by the
 * collector, and UTF-8 is as compact as the session file itself.
 *
 * Texts are packed into slabs of 1 MiB (a larger text gets a slab of its own);
 * where each one lies is kept in typed arrays, so a text costs its bytes and
 * twelve more. A text that is not well-formed UTF-16 (a lone surrogate, which
 * UTF-8 cannot hold) is kept as the string it is.
 */
const SLAB = 1 << 20
/** A text of more than this gets a slab of its own, so a slab's unused end stays small. */
const OWN_SLAB = SLAB >> 2

/** `array`, or a copy of it twice as long (at least) when `index` is past its end: typed arrays do not grow. */
export function grown(array: Uint32Array, index: number): Uint32Array
export function grown(array: Uint8Array, index: number): Uint8Array
export function grown(array: Uint8Array | Uint32Array, index: number): Uint8Array | Uint32Array {
  if (index < array.length) return array
  const length = Math.max(array.length * 2, index + 1)
  const larger = array instanceof Uint32Array ? new Uint32Array(length) : new Uint8Array(length)
  larger.set(array)
  return larger
}

/** Texts read by index, oldest first: a `TextList`, or an array. */
export interface Texts {
  readonly length: number
  at(index: number): string | undefined
}

export class TextList implements Texts {
  private readonly slabs: Array<Buffer> = []
  /** The slab that takes small texts (-1 before the first), and how many of its bytes are used. */
  private current = -1
  private used = 0
  private slabOf: Uint32Array = new Uint32Array(256)
  private startOf: Uint32Array = new Uint32Array(256)
  private endOf: Uint32Array = new Uint32Array(256)
  /** Texts kept as strings: the ones UTF-8 cannot hold. */
  private readonly strings = new Map<number, string>()
  private count = 0

  /** How many texts it holds. */
  get length(): number {
    return this.count
  }

  /**
   * Appends `text`, kept as `before`, `text` and `after` one after the other (written
   * so, never joined into a string first: `before` and `after` are a few constant
   * characters around a text of any size); its index is the length before.
   */
  push(text: string, before = "", after = ""): void {
    const index = this.count
    this.slabOf = grown(this.slabOf, index)
    this.startOf = grown(this.startOf, index)
    this.endOf = grown(this.endOf, index)
    this.count += 1
    // UTF-8 takes at most 3 bytes a UTF-16 unit: where that much fits in the current slab, the text is written
    // there straight away, without a pass to measure it first, and kept as a string after all if it is not well-formed.
    const most = 3 * (before.length + text.length + after.length)
    if (this.current !== -1 && most <= SLAB - this.used && most <= OWN_SLAB) {
      const slab = this.slabs[this.current]!
      const start = this.used
      const textStart = this.writeShort(slab, start, before)
      const textEnd = textStart + slab.write(text, textStart, "utf8")
      // As many bytes as units: ASCII, well-formed.
      if (textEnd - textStart !== text.length && !text.isWellFormed()) {
        this.strings.set(index, before + text + after)
        return
      }
      this.used = this.writeShort(slab, textEnd, after)
      this.place(index, this.current, start, this.used)
      return
    }
    const textBytes = Buffer.byteLength(text, "utf8")
    // As many bytes as characters: ASCII, well-formed (most texts, and the check costs a pass over the text).
    if (textBytes !== text.length && !text.isWellFormed()) {
      this.strings.set(index, before + text + after)
      return
    }
    const bytes = (before.length === 0 ? 0 : Buffer.byteLength(before, "utf8")) + textBytes + (after.length === 0 ? 0 : Buffer.byteLength(after, "utf8"))
    if (bytes > OWN_SLAB) {
      const slab = Buffer.allocUnsafeSlow(bytes)
      this.write(slab, 0, before, text, after)
      this.place(index, this.slabs.push(slab) - 1, 0, bytes)
      return
    }
    if (this.current === -1 || this.used + bytes > SLAB) {
      this.current = this.slabs.push(Buffer.allocUnsafeSlow(SLAB)) - 1
      this.used = 0
    }
    const start = this.used
    this.used = this.write(this.slabs[this.current]!, start, before, text, after)
    this.place(index, this.current, start, this.used)
  }

  /** Writes the three parts into `slab` from `at`; returns where they end. */
  private write(slab: Buffer, at: number, before: string, text: string, after: string): number {
    const end = this.writeShort(slab, at, before)
    return this.writeShort(slab, end + slab.write(text, end, "utf8"), after)
  }

  /** Writes `text` (a few characters around a text) into `slab` at `at`; returns where it ends. */
  private writeShort(slab: Buffer, at: number, text: string): number {
    if (text.length === 0) return at
    // Most texts are kept after a comma: one ASCII character is stored as its byte, not written through a call.
    if (text.length === 1 && text.charCodeAt(0) < 0x80) {
      slab[at] = text.charCodeAt(0)
      return at + 1
    }
    return at + slab.write(text, at, "utf8")
  }

  /** The text at `index` (counted from the end when negative, as `Array.at`), or undefined. */
  at(index: number): string | undefined {
    const at = index < 0 ? this.count + index : index
    if (!Number.isInteger(at) || at < 0 || at >= this.count) return undefined
    return this.strings.get(at) ?? this.slabs[this.slabOf[at]!]!.toString("utf8", this.startOf[at], this.endOf[at])
  }

  /** The UTF-8 length of the text at `index` (which must be in the list). */
  byteLength(index: number): number {
    const string = this.strings.get(index)
    return string === undefined ? this.endOf[index]! - this.startOf[index]! : Buffer.byteLength(string, "utf8")
  }

  /** Copies the UTF-8 bytes of the text at `index` (in the list) into `target` at `at`; returns how many. */
  copy(index: number, target: Buffer, at: number): number {
    const string = this.strings.get(index)
    return string === undefined ? this.slabs[this.slabOf[index]!]!.copy(target, at, this.startOf[index], this.endOf[index]) : target.write(string, at, "utf8")
  }

  /**
   * The UTF-8 bytes of the text at `index` (in the list), as a view of the memory
   * that keeps them (not a copy: its bytes never change); a text kept as a string,
   * encoded afresh.
   */
  view(index: number): Buffer {
    const string = this.strings.get(index)
    return string === undefined ? this.slabs[this.slabOf[index]!]!.subarray(this.startOf[index], this.endOf[index]) : Buffer.from(string, "utf8")
  }

  private place(index: number, slab: number, start: number, end: number): void {
    this.slabOf[index] = slab
    this.startOf[index] = start
    this.endOf[index] = end
  }
}
