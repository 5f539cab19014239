/**
 * A successful reply's events read as the openai SDK reads them, without its
 * stream classes: the SDK's rules for lines and fields, and for what a message's
 * data means, kept exactly (`test/model/SseMessages.test.ts` holds the two to
 * agreement over generated streams, cut into reads anywhere).
 *
 * Lines: a line ends at `\n`, `\r\n` or `\r`; the SDK decides a `\r` only by the
 * byte after it, so a line ended by a lone `\r` at the end of a read waits for the
 * next read. Mino's reads are whole events (EventFrames.ts), so one that ends
 * with `\r\r` ends its last line there (`eventEnd`): the byte after could only make
 * the `\r` a `\r\n`, which ends the same empty line. (The SDK held such an event
 * back until more bytes came, which a server sending only keep-alive comments
 * after it, dropped before they are read, never sends.) Each line is decoded as
 * UTF-8 on its own (a byte order mark at its start dropped, a malformed sequence
 * replaced).
 *
 * Fields: an empty line ends a message, when an `event` (not empty) or a `data`
 * line came before it; a line starting with `:` is a comment; otherwise the field
 * name is what comes before the first `:`, its value what comes after it (one
 * space dropped); `data` lines are joined with `\n`; other fields are ignored.
 *
 * Data: a message whose data begins `[DONE]` ends the reading (what follows is
 * read and ignored); any other is JSON, and an object with a truthy `error` is the
 * stream's failure. The event's name decides nothing (the SDK's Assistants branch,
 * for names beginning `thread.`, is not the Responses API's).
 *
 * Pure but for the reader at the end, which pulls a framed body (EventFrames.ts).
 */

const LF = 0x0a
const CR = 0x0d

/** One message: its `event` field (null when none came) and its data. */
export interface Message {
  readonly event: string | null
  readonly data: string
}

/** A line decoder and a field decoder, for one stream. */
export interface Decoder {
  /** The messages that one read completes. */
  readonly push: (chunk: Uint8Array) => ReadonlyArray<Message>
  /** The messages the stream's end completes. */
  readonly end: () => ReadonlyArray<Message>
  /** The messages completed by taking the read just pushed as an event's end (a `\r` it ended with ends its line). */
  readonly eventEnd: () => ReadonlyArray<Message>
}

const EMPTY = new Uint8Array(0)
const NEWLINE = new Uint8Array([LF])

/** The index of the first `\n` or `\r` at or after `from`, or -1. */
const newlineAt = (bytes: Uint8Array, from: number): number => {
  for (let i = from; i < bytes.length; i++) if (bytes[i] === LF || bytes[i] === CR) return i
  return -1
}

export const decoder = (): Decoder => {
  const utf8 = new TextDecoder()
  // Bytes not yet given as a line, and, after a `\r` not yet decided, the index right after it.
  let pending = EMPTY
  let afterCr: number | undefined
  let event: string | null = null
  let data: Array<string> = []

  const field = (raw: string, out: Array<Message>): void => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
    if (line === "") {
      if ((event === null || event === "") && data.length === 0) return
      out.push({ event, data: data.join("\n") })
      event = null
      data = []
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const name = colon === -1 ? line : line.slice(0, colon)
    const rest = colon === -1 ? "" : line.slice(colon + 1)
    const value = rest.startsWith(" ") ? rest.slice(1) : rest
    if (name === "event") event = value
    else if (name === "data") data.push(value)
  }

  const push = (chunk: Uint8Array): ReadonlyArray<Message> => {
    let bytes: Uint8Array
    if (pending.length === 0) bytes = chunk
    else {
      bytes = new Uint8Array(pending.length + chunk.length)
      bytes.set(pending)
      bytes.set(chunk, pending.length)
    }
    const out: Array<Message> = []
    // Where the next line begins in `bytes`.
    let start = 0
    while (true) {
      const at = newlineAt(bytes, start + (afterCr ?? 0))
      if (at === -1) break
      const carriage = bytes[at] === CR
      if (carriage && afterCr === undefined) {
        afterCr = at + 1 - start
        continue
      }
      if (afterCr !== undefined && (at - start !== afterCr || carriage)) {
        // A `\r` followed by something other than `\n`: its line ended there, less the byte before it.
        field(utf8.decode(bytes.subarray(start, start + afterCr - 1)), out)
        start += afterCr
        afterCr = undefined
        continue
      }
      const end = afterCr !== undefined ? at - 1 : at
      field(utf8.decode(bytes.subarray(start, end)), out)
      start = at + 1
      afterCr = undefined
    }
    pending = start === bytes.length ? EMPTY : bytes.slice(start)
    return out
  }

  const eventEnd = (): ReadonlyArray<Message> => {
    if (afterCr === undefined || afterCr !== pending.length) return []
    const out: Array<Message> = []
    field(utf8.decode(pending.subarray(0, afterCr - 1)), out)
    pending = EMPTY
    afterCr = undefined
    return out
  }

  return { push, end: () => (pending.length === 0 ? [] : push(NEWLINE)), eventEnd }
}

/** As the SDK tells a cancelled read: the iteration ends quietly. */
const isAbortError = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null &&
  (("name" in cause && cause.name === "AbortError") || ("message" in cause && String(cause.message).includes("FetchRequestCanceledException")))

/**
 * The data of each message of a successful reply, read by `read` (its events,
 * framed: EventFrames.reads, each read a whole event), parsed as it is taken, so the messages before a
 * malformed one are given first. `failure` makes the error for a message that
 * reports one (the SDK's `APIError`, which the client's classification knows).
 */
export const reader = (read: () => Promise<Uint8Array | undefined>, failure: (error: unknown) => Error): AsyncIterator<unknown> => {
  const decode = decoder()
  const messages: Array<Message> = []
  let taken = 0
  let ended = false
  let done = false
  const next = async (): Promise<IteratorResult<unknown>> => {
    while (true) {
      while (taken < messages.length) {
        const message = messages[taken++]!
        if (done) continue
        if (message.data.startsWith("[DONE]")) {
          done = true
          continue
        }
        const data: unknown = JSON.parse(message.data)
        if (typeof data === "object" && data !== null && "error" in data && Boolean(data.error)) throw failure(data.error)
        return { done: false, value: data }
      }
      messages.length = 0
      taken = 0
      if (ended) return { done: true, value: undefined }
      const piece = await read().catch((cause: unknown) => {
        if (isAbortError(cause)) return null
        throw cause
      })
      // A cancelled read ends the reading as it is (the SDK's); the stream's end completes what it held.
      if (piece === null) ended = true
      else if (piece === undefined) {
        ended = true
        for (const message of decode.end()) messages.push(message)
      } else {
        for (const message of decode.push(piece)) messages.push(message)
        for (const message of decode.eventEnd()) messages.push(message)
      }
    }
  }
  return { next }
}
