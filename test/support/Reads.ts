/** A reply's body as the model client reads it (EventFrames.Source), made from given pieces. */
import * as fc from "fast-check"
import * as EventFrames from "../../src/model/stream/EventFrames.js"

/** How an endpoint could end a line of its event stream, ends of events and odd mixes included. */
export const lineEnding = fc.constantFrom("\n", "\r\n", "\r", "\n\n", "\r\n\r\n", "\r\r", "\n\r\n", "\r\n\n")

/** An event stream of up to 14 of `line`'s lines, each with its ending, as bytes. */
export const sseStream = (line: fc.Arbitrary<string>): fc.Arbitrary<Buffer> =>
  fc.array(fc.tuple(line, lineEnding), { maxLength: 14 }).map((lines) => Buffer.from(lines.map(([text, end]) => text + end).join(""), "utf8"))

/** A source that gives `pieces` as its reads; `onRead` is told each piece's size as it is read. */
export const sourceOf = (pieces: ReadonlyArray<Uint8Array>, onRead: (bytes: number) => void = () => {}): EventFrames.Source => {
  let next = 0
  let cancelled = false
  return {
    read: () => {
      const piece = cancelled ? undefined : pieces[next++]
      if (piece !== undefined) onRead(piece.length)
      return Promise.resolve(piece)
    },
    cancel: () => {
      cancelled = true
    }
  }
}

/** A source whose first read fails with `cause`. */
export const failingSource = (cause: unknown): EventFrames.Source => ({ read: () => Promise.reject(cause), cancel: () => {} })

/** What `read` gives, as a stream pulled a read at a time (a Response's body, for the SDK's parser). */
const streamOfReads = (read: () => Promise<Uint8Array | undefined>): ReadableStream<Uint8Array> =>
  new ReadableStream<Uint8Array>({
    async pull(controller) {
      const piece = await read()
      if (piece === undefined) controller.close()
      else controller.enqueue(piece)
    }
  }, { highWaterMark: 0 })

/** A body that gives `pieces` as its reads. */
export const streamOf = (pieces: ReadonlyArray<Uint8Array>): ReadableStream<Uint8Array> => streamOfReads(sourceOf(pieces).read)

/** `pieces` framed as the model client frames a reply's body (EventFrames.reads), as a stream the SDK's parser can read. */
export const framedStream = (pieces: ReadonlyArray<Uint8Array>, onRead?: (bytes: number) => void): ReadableStream<Uint8Array> =>
  streamOfReads(EventFrames.reads(sourceOf(pieces, onRead)))
