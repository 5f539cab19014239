/**
 * The SDK prints a malformed `thread.…` event's raw data with `console.error`,
 * whatever its log level; Mino renames such events before the SDK reads them.
 * Checked against the SDK's own SSE parser: over generated streams cut into reads
 * anywhere, no event the SDK sees is named `thread.…`, the events' data are what
 * they were, and the bytes change only where an `e` became `_`.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { _iterSSEMessages } from "openai/core/streaming"
import * as ThreadEvents from "../../src/model/stream/ThreadEvents.js"
import { cutAt } from "../support/Cuts.js"

const BOM = "\uFEFF"

/** A line as an endpoint could send it, hostile spellings included. */
const line = fc.oneof(
  fc.constantFrom("event: thread.run", "event:thread.message", `${BOM}event: thread.x`, `${BOM}event:thread.`, "event: thread."),
  fc.constantFrom("event: response.output_text.delta", "event:  thread.two-spaces", "Event: thread.case", "event", "event:", "even", ""),
  fc.constantFrom(`data: {"type":"response.created"}`, "data: {not json", "data: event: thread.inside", ": comment event: thread."),
  fc.string({ unit: fc.constantFrom("e", "v", "n", "t", ":", " ", "h", "r", "a", "d", ".", "x", BOM), maxLength: 16 }),
  fc.string({ maxLength: 12 })
)
const ending = fc.constantFrom("\n", "\r\n", "\r", "\n\n", "\r\n\r\n")
const streamArb = fc.array(fc.tuple(line, ending), { maxLength: 12 }).map((lines) => Buffer.from(lines.map(([text, end]) => text + end).join(""), "utf8"))

const isThread = (event: { readonly event: string | null }): boolean => event.event?.startsWith("thread.") === true

const renamed = (pieces: ReadonlyArray<Uint8Array>): Buffer => {
  const rename = ThreadEvents.renamer()
  return Buffer.concat([...pieces.map((piece) => rename.push(piece)), rename.end()])
}

/** The events the SDK's own parser reads from `bytes`: name and data. */
const sdkEvents = async (bytes: Uint8Array) => {
  const events: Array<{ readonly event: string | null; readonly data: string }> = []
  for await (const sse of _iterSSEMessages(new Response(bytes), new AbortController())) events.push({ event: sse.event, data: sse.data })
  return events
}

describe("thread events", () => {
  it("are renamed wherever the reads are cut, and nothing else changes (1,000 generated streams)", async () => {
    let renamedEvents = 0
    await fc.assert(
      fc.asyncProperty(streamArb, fc.array(fc.nat(400), { maxLength: 8 }), async (input, cuts) => {
        const whole = renamed([input])
        expect(renamed(cutAt(input, cuts))).toEqual(whole)
        expect(whole.length).toBe(input.length)
        for (let i = 0; i < input.length; i++) {
          if (whole[i] !== input[i]) expect([input[i], whole[i]]).toEqual([0x65, 0x5f])
        }
        const before = await sdkEvents(input)
        const after = await sdkEvents(whole)
        expect(after.filter(isThread)).toEqual([])
        // What Mino reads, each event's data in order, is unchanged (a renamed event with no data is no event at all).
        const data = (events: typeof before) => events.map((event) => event.data).filter((text) => text !== "")
        expect(data(after)).toEqual(data(before))
        renamedEvents += before.filter(isThread).length
      }),
      { numRuns: 1_000 }
    )
    console.log(`thread events: 1,000 generated streams, ${renamedEvents} events the SDK would have read as thread.… renamed`)
    expect(renamedEvents).toBeGreaterThan(100)
  })

  it("pass a stream through unchanged, read by read, when it has none", async () => {
    const body = new Response("event: response.created\ndata: {}\n\n").body!
    const text = await new Response(ThreadEvents.unnamed(body)).text()
    expect(text).toBe("event: response.created\ndata: {}\n\n")
  })
})
