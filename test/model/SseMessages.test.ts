/**
 * A successful reply's events, read by Mino (SseMessages.ts) as the openai SDK
 * reads them, checked against the SDK itself: over generated streams cut into
 * reads anywhere, framed as the client frames them (EventFrames.ts), the same
 * messages as the SDK's SSE parser, and the same values, end and failure as the
 * SDK's stream reader. Event names decide nothing: a `thread.…` event is read as
 * any other (the SDK's Assistants branch printed a malformed one's raw data).
 */
import { describe, expect, it, vi } from "@effect/vitest"
import * as fc from "fast-check"
import { APIError } from "openai"
import { _iterSSEMessages, Stream as SdkStream } from "openai/core/streaming"
import * as EventFrames from "../../src/model/stream/EventFrames.js"
import * as SseMessages from "../../src/model/stream/SseMessages.js"
import { cutAt } from "../support/Cuts.js"
import { failingSource, sourceOf, sseStream, streamOf } from "../support/Reads.js"

const BOM = "\uFEFF"

/** A line as an endpoint could send it, hostile spellings included. */
const line = fc.oneof(
  fc.constantFrom(`data: {"type":"response.created"}`, "data:{\"a\":1}", "data", "data:", `${BOM}data: {}`, "data: [DONE]", "dataX: 1", " data: 1"),
  fc.constantFrom("event: response.output_text.delta", "event:x", "event:", "event: ", "event:  ", "event", `${BOM}event: y`, "Event: z", "event: thread.run"),
  fc.constantFrom(": keep-alive", ":", "id: 7", "retry: 100", "noise", `${BOM}${BOM}data: 1`, `${BOM}: c`, "data: caf\u00e9 \u{1F600}"),
  fc.string({ unit: fc.constantFrom("d", "a", "t", "e", "v", "n", ":", " ", "{", "}", "1", BOM, "\r", "\n", "\u00e9"), maxLength: 14 })
)
const streamArb = sseStream(line)
const cutsArb = fc.array(fc.nat(400), { maxLength: 10 })

/** A message's name as it matters: an empty name, which a dropped `event:` line can leave, is none. */
const named = (message: SseMessages.Message) => ({ event: message.event === "" ? null : message.event, data: message.data })

const sdkMessages = async (bytes: Uint8Array) => {
  const out: Array<SseMessages.Message> = []
  for await (const sse of _iterSSEMessages(new Response(bytes), new AbortController())) out.push(named(sse))
  return out
}

/** Mino's messages from `pieces`, framed as the client frames a reply. */
const framedMessages = (pieces: ReadonlyArray<Uint8Array>) => {
  const frames = EventFrames.make()
  const decode = SseMessages.decoder()
  const out: Array<SseMessages.Message> = []
  for (const piece of pieces) for (const event of EventFrames.push(frames, piece).events) out.push(...decode.push(event), ...decode.eventEnd())
  const rest = EventFrames.end(frames)
  if (rest.length > 0) out.push(...decode.push(rest))
  out.push(...decode.end())
  return out.map(named)
}

/** Mino's messages from `pieces` as they come, unframed. */
const rawMessages = (pieces: ReadonlyArray<Uint8Array>) => {
  const decode = SseMessages.decoder()
  return [...pieces.flatMap((piece) => decode.push(piece)), ...decode.end()].map(named)
}

/** How a reading ended: the values given, then the end or the failure (its kind and what it carried). */
const outcome = async (next: () => Promise<IteratorResult<unknown>>) => {
  const values: Array<unknown> = []
  try {
    while (true) {
      const result = await next()
      if (result.done === true) return { values, end: "end" }
      values.push(result.value)
    }
  } catch (cause) {
    if (cause instanceof APIError) return { values, end: "error", error: cause.error }
    if (cause instanceof SyntaxError) return { values, end: "malformed" }
    return { values, end: `other: ${String(cause)}` }
  }
}

/** Data an endpoint could send in one message. */
const data = fc.oneof(
  fc.constantFrom(`{"type":"response.created"}`, `{"type":"x","n":1}`, "[DONE]", "[DONE] and more", "[DON", `{"error":{"message":"no"}}`),
  fc.constantFrom(`{"error":null}`, `{"error":0}`, `{"error":""}`, `{"error":false}`, `{"error":[]}`, "5", `"text"`, "null", "true", "[]"),
  fc.constantFrom("{not json", "", "a\ndata: b", `{"a":\ndata: 1}`, `{"type":"ok"} `),
  fc.json({ maxDepth: 2 })
)
const dataStreamArb = fc.array(fc.tuple(fc.constantFrom("event: response.x\n", "", "event:\n", ": note\n"), data, fc.constantFrom("\n\n", "\r\n\r\n", "\r\r")), { maxLength: 8 })
  .map((events) => Buffer.from(events.map(([name, text, end]) => `${name}data: ${text}${end}`).join(""), "utf8"))

const streamError = (error: unknown) => new APIError(undefined, error as object, undefined, undefined)

describe("SSE messages read as the SDK reads them", () => {
  it("gives the SDK's messages, framed or not, wherever the reads are cut (3,000 generated streams)", async () => {
    let messages = 0
    await fc.assert(
      fc.asyncProperty(streamArb, cutsArb, async (input, cuts) => {
        const pieces = cutAt(input, cuts)
        const expected = await sdkMessages(input)
        expect(framedMessages(pieces)).toEqual(expected)
        expect(rawMessages(pieces)).toEqual(expected)
        messages += expected.length
      }),
      { numRuns: 3_000 }
    )
    console.log(`SSE messages: 3,000 generated streams, ${messages} messages read as the SDK reads them`)
    expect(messages).toBeGreaterThan(2_000)
  })

  it("gives the SDK reader's values, end and failure: [DONE], data that is not JSON, an error object (2,000 generated streams)", async () => {
    // The SDK prints data that is not JSON to the console; Mino's reader prints nothing.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined)
    const ends = new Map<string, number>()
    try {
      await fc.assert(
        fc.asyncProperty(dataStreamArb, cutsArb, async (input, cuts) => {
          const sdk = SdkStream.fromSSEResponse(new Response(streamOf(cutAt(input, cuts))), new AbortController())[Symbol.asyncIterator]()
          const expected = await outcome(() => sdk.next())
          const mine = SseMessages.reader(EventFrames.reads(sourceOf(cutAt(input, cuts))), streamError)
          expect(await outcome(() => mine.next())).toEqual(expected)
          ends.set(expected.end, (ends.get(expected.end) ?? 0) + 1)
        }),
        { numRuns: 2_000 }
      )
    } finally {
      quiet.mockRestore()
    }
    console.log(`SSE data: 2,000 generated streams, ended ${[...ends].map(([end, count]) => `${end} ${count}`).join(", ")}`)
    expect(ends.get("end")).toBeGreaterThan(100)
    expect(ends.get("error")).toBeGreaterThan(100)
    expect(ends.get("malformed")).toBeGreaterThan(100)
  })

  it("gives an event whose lines end with a lone CR as soon as it is read, not when the next bytes come", async () => {
    const reader = SseMessages.reader(EventFrames.reads({
      read: (() => {
        let sent = false
        // The event, then a read that never comes (a server that only sends comments, dropped before they are read).
        return () => sent ? new Promise<undefined>(() => {}) : ((sent = true), Promise.resolve(Buffer.from(`data: {"type":"response.completed"}\r\r`)))
      })(),
      cancel: () => {}
    }), streamError)
    expect(await reader.next()).toEqual({ done: false, value: { type: "response.completed" } })
  })

  it("reads a thread.… event as any other: its data, and its error fails the reading", async () => {
    const read = (text: string) => outcome(SseMessages.reader(EventFrames.reads(sourceOf([Buffer.from(text)])), streamError).next)
    expect(await read(`event: thread.run\ndata: {"type":"response.created"}\n\n`)).toEqual({ values: [{ type: "response.created" }], end: "end" })
    expect(await read(`event: thread.run.failed\ndata: {"error":{"message":"no"}}\n\n`)).toEqual({ values: [], end: "error", error: { message: "no" } })
    expect(await read(`event: error\ndata: {"type":"x"}\n\n`)).toEqual({ values: [{ type: "x" }], end: "end" })
  })

  it("ends quietly, as the SDK does, when the reply's read is cancelled (AbortError), and fails on any other", async () => {
    const failing = (cause: unknown) => EventFrames.reads(failingSource(cause))
    const aborted = SseMessages.reader(failing(new DOMException("This operation was aborted", "AbortError")), streamError)
    expect(await outcome(aborted.next)).toEqual({ values: [], end: "end" })
    const dropped = SseMessages.reader(failing(new Error("terminated")), streamError)
    expect(await outcome(dropped.next)).toEqual({ values: [], end: "other: Error: terminated" })
  })
})
