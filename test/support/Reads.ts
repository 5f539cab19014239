/** A reply's body as the model client reads it (EventFrames.Source), made from given pieces. */
import * as EventFrames from "../../src/model/stream/EventFrames.js"

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

/** `pieces` framed as the model client frames a reply's body (EventFrames.reads), as a stream the SDK's parser can read. */
export const framedStream = (pieces: ReadonlyArray<Uint8Array>, onRead?: (bytes: number) => void): ReadableStream<Uint8Array> => {
  const read = EventFrames.reads(sourceOf(pieces, onRead))
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const event = await read()
      if (event === undefined) controller.close()
      else controller.enqueue(event)
    }
  }, { highWaterMark: 0 })
}
