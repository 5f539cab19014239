/**
 * The model stream cut into whole events before they are read (SseMessages.ts
 * reads them as the openai SDK does), in time linear in its size, each event
 * bounded (ResponseBudget.ts) before it is parsed.
 *
 * Why: the SDK's SSE reader (`iterSSEChunks`), which read Mino's streams until
 * 0.4, adds each read to what it holds by copying all of it, then looks for the
 * event's end from the start again. An event that arrives in n reads costs n
 * copies and n scans of itself: time grows with the square of its size (a 200 MiB
 * event took minutes, and the idle rule then named the wrong cause). And it keeps
 * a string for each line of a block that makes no event (comments, `id:`, unknown
 * fields) until the next event: an endless run of keep-alive comments grew it for
 * ever.
 *
 * Here one pass finds where each event ends (line ends located with `indexOf`),
 * an event that spans reads is held as copies of its pieces (each byte copied
 * once) and handed on whole, and every event is its own read. A block that makes
 * no event is dropped: it would only keep its lines. An event that grows past
 * `MAX_EVENT_BYTES` or `MAX_EVENT_LINES` ends the stream with the line that says
 * so (`EventTooLarge`), the socket closed, before any of it is parsed.
 *
 * The SDK's rules are kept exactly. An event ends at the first `\n\n`, `\r\r` or
 * `\r\n\r\n` (its `findDoubleNewlineIndex`). A block is an event when one of its
 * lines (ended by `\n`, `\r` or `\r\n`; a byte order mark at its start dropped, as
 * the SDK's per-line decoding does) is a `data` field, or an `event` field with a
 * value. What comes after the last end when the stream ends is passed on as it is.
 */
import * as ResponseBudget from "./ResponseBudget.js"

const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
const SPACE = 0x20
const BOM = [0xef, 0xbb, 0xbf] as const
/** The bytes of a line that tell whether it makes an event: a BOM, `event: `, one byte of value. */
const HEAD = 11

const DATA = Array.from("data", (char) => char.charCodeAt(0))
const EVENT = Array.from("event", (char) => char.charCodeAt(0))

/** The stream went past one of ResponseBudget's bounds for an event; `message` is the line that says which. */
export class EventTooLarge extends Error {
  override readonly name = "EventTooLarge"
}

const hasAt = (head: ArrayLike<number>, known: number, at: number, text: ReadonlyArray<number>): boolean => {
  if (at + text.length > known) return false
  for (let i = 0; i < text.length; i++) if (head[at + i] !== text[i]) return false
  return true
}

/**
 * Whether a line makes the SDK's parser dispatch an event: given its first bytes
 * (`head`, at least `min(length, 11)` of them) and its `length` in bytes.
 */
export const makesEvent = (head: ArrayLike<number>, length: number): boolean => {
  const known = Math.min(length, HEAD)
  const at = hasAt(head, known, 0, BOM) ? BOM.length : 0
  // `data`, alone or followed by `:`: a data line, even an empty one.
  if (hasAt(head, known, at, DATA) && (length === at + DATA.length || head[at + DATA.length] === COLON)) return true
  // `event:` with a value (after one optional space); an empty name sets nothing the SDK acts on.
  if (hasAt(head, known, at, EVENT) && length > at + EVENT.length && head[at + EVENT.length] === COLON) {
    const value = at + EVENT.length + 1
    return length > (head[value] === SPACE ? value + 1 : value)
  }
  return false
}

/** What is known of the stream between reads: the block being received, and the line within it. */
export interface Frames {
  /** The block's bytes from earlier reads, each a copy. */
  held: Array<Uint8Array>
  heldBytes: number
  /** The block's line ends so far. */
  lines: number
  /** Whether one of the block's lines makes an event. */
  event: boolean
  /** The line ends just received with nothing between them (the last four at most): an end split across reads. */
  ends: string
  /** The first bytes of the current line, and its length so far. */
  readonly head: Uint8Array
  lineLength: number
}

export const make = (): Frames => ({ held: [], heldBytes: 0, lines: 0, event: false, ends: "", head: new Uint8Array(HEAD), lineLength: 0 })

const isEnd = (ends: string): boolean => ends.endsWith("\n\n") || ends.endsWith("\r\r") || ends === "\r\n\r\n"

const joined = (pieces: ReadonlyArray<Uint8Array>, last: Uint8Array, bytes: number): Uint8Array => {
  const out = new Uint8Array(bytes)
  let at = 0
  for (const piece of pieces) {
    out.set(piece, at)
    at += piece.length
  }
  out.set(last, at)
  return out
}

const reset = (frames: Frames): void => {
  frames.held = []
  frames.heldBytes = 0
  frames.lines = 0
  frames.event = false
  frames.ends = ""
  frames.lineLength = 0
}

/** What one read gives: the events it completed, each whole, and why the stream must end, if it must. */
export interface Pushed {
  readonly events: ReadonlyArray<Uint8Array>
  readonly refusal?: string
}

/** Takes one read; `frames` then holds what it began and did not end. */
export const push = (frames: Frames, chunk: Uint8Array): Pushed => {
  const events: Array<Uint8Array> = []
  // Where the current block begins in this read.
  let start = 0
  let at = 0
  // The next `\n` and `\r` at or after `at` (-1: none): each found once, so the pass is linear.
  let lf = chunk.indexOf(LF)
  let cr = chunk.indexOf(CR)
  while (at < chunk.length) {
    if (lf !== -1 && lf < at) lf = chunk.indexOf(LF, at)
    if (cr !== -1 && cr < at) cr = chunk.indexOf(CR, at)
    const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr)
    const stop = end === -1 ? chunk.length : end
    if (stop > at) {
      let i = at
      while (i < stop && frames.lineLength < HEAD) frames.head[frames.lineLength++] = chunk[i++]!
      frames.lineLength += stop - i
      frames.ends = ""
    }
    if (end === -1) break
    if (frames.lineLength > 0 && !frames.event) frames.event = makesEvent(frames.head, frames.lineLength)
    frames.lineLength = 0
    frames.lines += 1
    frames.ends = (frames.ends + (chunk[end] === LF ? "\n" : "\r")).slice(-4)
    at = end + 1
    if (isEnd(frames.ends)) {
      const bytes = frames.heldBytes + at - start
      const refusal = ResponseBudget.eventRefusal(bytes, frames.lines)
      if (refusal !== undefined) return { events, refusal }
      if (frames.event) events.push(frames.held.length === 0 ? chunk.subarray(start, at) : joined(frames.held, chunk.subarray(start, at), bytes))
      reset(frames)
      start = at
    }
  }
  if (start < chunk.length) {
    frames.held.push(chunk.slice(start))
    frames.heldBytes += chunk.length - start
  }
  const refusal = ResponseBudget.eventRefusal(frames.heldBytes, frames.lines)
  return refusal === undefined ? { events } : { events, refusal }
}

/** What the stream ended with after its last event's end, as it came (the SDK makes of it what it makes). */
export const end = (frames: Frames): Uint8Array => {
  const rest = joined(frames.held, new Uint8Array(0), frames.heldBytes)
  reset(frames)
  return rest
}

/** What events are read from: the next piece, or `undefined` at the end (a reply's body, HttpTransport.BodyReads). */
export interface Source {
  readonly read: () => Promise<Uint8Array | undefined>
  readonly cancel: () => void
}

/**
 * `source` read as whole events, one per read, each bounded: past a bound, the
 * events before it are read, then every read fails with `EventTooLarge` and the
 * source is cancelled (its socket closed) before any more of it is read.
 */
export const reads = (source: Source): (() => Promise<Uint8Array | undefined>) => {
  const frames = make()
  const ready: Array<Uint8Array> = []
  let taken = 0
  let refused: string | undefined
  let ended = false
  return async () => {
    while (true) {
      if (taken < ready.length) {
        const event = ready[taken++]!
        if (taken === ready.length) {
          ready.length = 0
          taken = 0
        }
        return event
      }
      if (refused !== undefined) {
        source.cancel()
        throw new EventTooLarge(refused)
      }
      if (ended) return undefined
      const piece = await source.read()
      if (piece === undefined) {
        ended = true
        // What came after the last event's end, as it came.
        const rest = end(frames)
        if (rest.length > 0) ready.push(rest)
        continue
      }
      const { events, refusal } = push(frames, piece)
      for (const event of events) ready.push(event)
      refused = refusal
    }
  }
}
