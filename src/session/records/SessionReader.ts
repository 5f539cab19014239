/**
 * Reading a session file as a stream of lines: a fixed buffer is read chunk by
 * chunk, so a file of any size (over 2 GiB too) opens, and a line never costs
 * more than its own bytes. It takes no lock and writes nothing: restore uses it
 * under the lock, and `mino log` may read a file another Mino is appending to
 * (it then sees the committed records, and at most a last line still being
 * written, reported as unreadable).
 *
 * Each line is one of:
 * - `Record`: one of the five record types, with all of its type's fields;
 * - `Other`: a JSON object of another `type` — kept and tolerated;
 * - `Unreadable`: not JSON, not an object with a string `type`, a known type
 *   that fails its schema, larger or deeper than a record may be (the limits
 *   `Records.encode` applies before saving), or a last line without
 *   its newline (a write cut short). `turnId` names its turn when it can be read.
 */
import * as Fs from "node:fs"
import * as Json from "../../Json.js"
import { deeperThan, isRecord, KNOWN_TYPES, MAX_DEPTH, MAX_RECORD_BYTES, type SessionRecord } from "./Records.js"

interface Span {
  /** Byte offsets of the line in the file, its newline included when it has one. */
  readonly start: number
  readonly end: number
}

export type Line =
  | Span & { readonly _tag: "Record"; readonly record: SessionRecord; readonly text: string }
  | Span & { readonly _tag: "Other"; readonly type: string; readonly text: string; readonly turnId?: string }
  | Span & { readonly _tag: "Unreadable"; readonly turnId?: string; readonly terminated: boolean }

const CHUNK = 1 << 22
/** Decoded at a time: whole lines up to this many bytes. */
const GROUP = 1 << 16

/** The lines of the open file `fd`, from its start, read chunk by chunk. */
export function* lines(fd: number): Generator<Line> {
  const buffer = Buffer.allocUnsafe(CHUNK)
  // A line that spans chunks: its pieces so far, unless it is already too long to keep.
  let pieces: Array<Buffer> = []
  let pieceBytes = 0
  let lineStart = 0
  let position = 0
  while (true) {
    const read = Fs.readSync(fd, buffer, 0, CHUNK, position)
    if (read === 0) break
    let from = 0
    // The first line may continue one the previous chunk began.
    const first = buffer.indexOf(0x0a, 0)
    if (pieceBytes > 0 && first !== -1 && first < read) {
      const end = position + first + 1
      const length = pieceBytes + first
      if (length > MAX_RECORD_BYTES) yield { _tag: "Unreadable", start: lineStart, end, terminated: true }
      else yield classify(Buffer.concat([...pieces, buffer.subarray(0, first)]).toString("utf8"), lineStart, end, true)
      pieces = []
      pieceBytes = 0
      from = first + 1
      lineStart = end
    }
    // The complete lines of the chunk are decoded a group at a time (up to GROUP bytes of whole
    // lines, or one longer line), and each line is a slice of its group's string: far cheaper than
    // decoding line by line, and small enough that a group's text is garbage before the collector
    // next runs (a whole chunk's text would survive it). UTF-8 never has a 0x0a byte inside a character.
    const last = buffer.lastIndexOf(0x0a, read - 1)
    if (pieceBytes === 0 && last >= from) {
      while (from <= last) {
        const reach = from + GROUP - 1
        const groupEnd = reach >= last ? last : Math.max(buffer.lastIndexOf(0x0a, reach), buffer.indexOf(0x0a, from))
        const group = buffer.toString("utf8", from, groupEnd + 1)
        // As many characters as bytes: every character was one byte (ASCII, or a stray byte read as U+FFFD; no character
        // is ever fewer bytes than UTF-16 units), so a line's bytes are where its text is, with no second search.
        const ascii = group.length === groupEnd + 1 - from
        let at = from
        let textAt = 0
        while (at <= groupEnd) {
          const textEnd = group.indexOf("\n", textAt)
          const newline = ascii ? from + textEnd : buffer.indexOf(0x0a, at)
          const end = position + newline + 1
          if (newline > at) yield classify(group.slice(textAt, textEnd), lineStart, end, true)
          at = newline + 1
          textAt = textEnd + 1
          lineStart = end
        }
        from = groupEnd + 1
      }
    }
    if (from < read) {
      if (pieceBytes <= MAX_RECORD_BYTES) pieces.push(Buffer.from(buffer.subarray(from, read)))
      pieceBytes += read - from
    }
    position += read
  }
  // A last line without its newline: a write the crash cut short.
  if (pieceBytes > 0) yield unreadable(pieceBytes <= MAX_RECORD_BYTES ? Buffer.concat(pieces).toString("utf8") : "", lineStart, position, false)
}

const classify = (line: string, start: number, end: number, terminated: boolean): Line => {
  if (line.length > MAX_RECORD_BYTES) return { _tag: "Unreadable", start, end, terminated }
  // A byte order mark an editor put before a line is not part of its record.
  const text = line.charCodeAt(0) === 0xfeff ? line.slice(1) : line
  const json = Json.parse(text)
  if (typeof json !== "object" || json === null || Array.isArray(json) || !("type" in json) || typeof json.type !== "string") {
    return { _tag: "Unreadable", start, end, terminated }
  }
  const typed = json as { readonly type: string }
  if (!KNOWN_TYPES.has(typed.type)) {
    const turnId = "turn_id" in json && typeof json.turn_id === "string" ? json.turn_id : undefined
    return turnId === undefined ? { _tag: "Other", type: typed.type, text, start, end } : { _tag: "Other", type: typed.type, text, start, end, turnId }
  }
  // Nesting deeper than MAX_DEPTH needs at least that many brackets: only a long line can.
  if (isRecord(typed) && (text.length < 2 * MAX_DEPTH || !deeperThan(typed, MAX_DEPTH))) {
    return { _tag: "Record", record: typed, text, start, end }
  }
  return unreadable(text, start, end, terminated, json)
}

const unreadable = (text: string, start: number, end: number, terminated: boolean, parsed: unknown = Json.parse(text)): Line => {
  const turnId = typeof parsed === "object" && parsed !== null && "turn_id" in parsed && typeof parsed.turn_id === "string" ? parsed.turn_id : undefined
  return turnId === undefined ? { _tag: "Unreadable", start, end, terminated } : { _tag: "Unreadable", start, end, terminated, turnId }
}

/**
 * Every line of the session file at `path`, read without a lock: for `mino log`.
 * The file must be a regular file (it is opened without following a symlink or
 * blocking); a failure to open it is thrown as the system's error.
 */
export function* readFile(path: string): Generator<Line> {
  const fd = Fs.openSync(path, Fs.constants.O_RDONLY | Fs.constants.O_NOFOLLOW | Fs.constants.O_NONBLOCK)
  try {
    if (!Fs.fstatSync(fd).isFile()) throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" })
    yield* lines(fd)
  } finally {
    Fs.closeSync(fd)
  }
}
