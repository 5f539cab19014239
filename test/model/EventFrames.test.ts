/**
 * The stream cut into whole events before they are read (EventFrames.ts),
 * checked against the SDK's own SSE parser: over generated streams cut into reads
 * anywhere, the SDK reads the same events from the framed stream as from the raw
 * one; each framed read is one whole event; an event past the bound ends the
 * stream before its end arrives; and an event's cost grows with its size, not its
 * square (a sweep, figures printed, no timing asserted).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { _iterSSEMessages } from "openai/core/streaming"
import * as EventFrames from "../../src/model/stream/EventFrames.js"
import * as ResponseBudget from "../../src/model/stream/ResponseBudget.js"
import * as SseMessages from "../../src/model/stream/SseMessages.js"
import { cutAt } from "../support/Cuts.js"
import { framedStream, sourceOf, sseStream, streamOf } from "../support/Reads.js"

const BOM = "\uFEFF"
const MIB = 1024 * 1024

/** A line as an endpoint could send it, hostile spellings included. */
const line = fc.oneof(
  fc.constantFrom(`data: {"type":"response.created"}`, "data:{\"a\":1}", "data", "data:", `${BOM}data: {}`, "data: [DONE]", "dataX: 1", " data: 1"),
  fc.constantFrom("event: response.output_text.delta", "event:x", "event:", "event: ", "event:  ", "event", `${BOM}event: y`, "Event: z", "eventX: 1"),
  fc.constantFrom(": keep-alive", ":", "id: 7", "retry: 100", "noise", `${BOM}${BOM}data: 1`, `${BOM}: c`),
  fc.string({ unit: fc.constantFrom("d", "a", "t", "e", "v", "n", ":", " ", "{", "}", "1", BOM, "\r", "\n"), maxLength: 14 })
)
const streamArb = sseStream(line)

/** Every read of a stream. */
const readAll = async (stream: ReadableStream<Uint8Array>): Promise<Array<Uint8Array>> => {
  const out: Array<Uint8Array> = []
  const reader = stream.getReader()
  while (true) {
    const { done, value } = await reader.read()
    if (done) return out
    out.push(value)
  }
}

/**
 * The events the SDK's own parser reads from `stream`: name and data. A name left
 * empty by a dropped `event:` line reads as none: the SDK acts on a name only when
 * it begins `thread.`, so the two are the same to it.
 */
const sdkEvents = async (stream: ReadableStream<Uint8Array>) => {
  const events: Array<{ readonly event: string | null; readonly data: string }> = []
  for await (const sse of _iterSSEMessages(new Response(stream), new AbortController())) events.push({ event: sse.event === "" ? null : sse.event, data: sse.data })
  return events
}

describe("events framed for the SDK", () => {
  it("the SDK reads the same events, wherever the reads are cut, and each framed read is one whole event (2,000 generated streams)", async () => {
    let events = 0
    let dropped = 0
    await fc.assert(
      fc.asyncProperty(streamArb, fc.array(fc.nat(400), { maxLength: 10 }), async (input, cuts) => {
        const pieces = cutAt(input, cuts)
        const before = await sdkEvents(streamOf([input]))
        const after = await sdkEvents(framedStream(pieces))
        expect(after).toEqual(before)
        const framed = await readAll(framedStream(pieces))
        // Every read but a tail the stream ended with holds exactly one of the SDK's event ends, at its end.
        const frames = EventFrames.make()
        const whole = EventFrames.push(frames, input).events
        expect(framed.slice(0, whole.length).map((bytes) => Buffer.from(bytes))).toEqual(whole.map((bytes) => Buffer.from(bytes)))
        for (const event of whole) expect(firstEnd(event)).toBe(event.length)
        events += before.length
        dropped += input.length - framed.reduce((sum, bytes) => sum + bytes.length, 0)
      }),
      { numRuns: 2_000 }
    )
    console.log(`events framed: 2,000 generated streams, ${events} events read alike, ${dropped} bytes of blocks that make no event dropped`)
    expect(events).toBeGreaterThan(1_000)
    expect(dropped).toBeGreaterThan(1_000)
  })

  it("drops blocks that make no event, so an endless run of keep-alive comments holds nothing", async () => {
    const comments = Buffer.from(": keep-alive\n\n".repeat(50_000))
    const frames = EventFrames.make()
    const { events, refusal } = EventFrames.push(frames, comments)
    expect(events).toEqual([])
    expect(refusal).toBeUndefined()
    expect(frames.heldBytes).toBe(0)
  })

  const lines: ReadonlyArray<readonly [string, boolean]> = [
    ["data: {}", true],
    ["data", true],
    ["data:", true],
    [`${BOM}data: 1`, true],
    [`${BOM}${BOM}data: 1`, false],
    ["dataX: 1", false],
    [" data: 1", false],
    ["event: x", true],
    ["event:x", true],
    ["event:  ", true],
    [`${BOM}event: x`, true],
    ["event: ", false],
    ["event:", false],
    ["event", false],
    ["Event: x", false],
    [": data", false],
    ["id: 1", false],
    ["", false]
  ]
  for (const [text, event] of lines) {
    it(`${JSON.stringify(text)} ${event ? "makes" : "does not make"} an event`, () => {
      const bytes = Buffer.from(text, "utf8")
      expect(EventFrames.makesEvent(bytes, bytes.length)).toBe(event)
    })
  }
})

/** Where the SDK says the first event in `bytes` ends (its own rule), or -1. */
const firstEnd = (bytes: Uint8Array): number => {
  for (let i = 0; i < bytes.length - 1; i++) {
    if (bytes[i] === 0x0a && bytes[i + 1] === 0x0a) return i + 2
    if (bytes[i] === 0x0d && bytes[i + 1] === 0x0d) return i + 2
    if (bytes[i] === 0x0d && bytes[i + 1] === 0x0a && bytes[i + 2] === 0x0d && bytes[i + 3] === 0x0a) return i + 4
  }
  return -1
}

/** One event of about `size` bytes (a reasoning item's opaque content), in reads of 64 KiB as a socket gives them. */
const bigEvent = (size: number): Array<Uint8Array> => {
  const opaque = "A".repeat(size)
  const bytes = Buffer.from(`event: response.output_item.done\ndata: {"type":"response.output_item.done","item":{"type":"reasoning","encrypted_content":"${opaque}"}}\n\n`)
  return cutAt(bytes, Array.from({ length: Math.floor(bytes.length / 65_536) }, (_, i) => (i + 1) * 65_536))
}

describe("an event's cost", () => {
  it("an event past the bound ends the stream before its end, with the line that says so", async () => {
    const pieces = bigEvent(ResponseBudget.MAX_EVENT_BYTES + 8 * MIB)
    const started = performance.now()
    let read = 0
    const failure = await sdkEvents(framedStream(pieces, (bytes) => (read += bytes))).then(() => undefined, (cause: unknown) => cause)
    expect(failure).toBeInstanceOf(EventFrames.EventTooLarge)
    expect((failure as Error).message).toBe(
      `the model stream sent more than ${ResponseBudget.MAX_EVENT_BYTES / MIB} MiB without ending an event, the most Mino reads of one event`
    )
    // Read no further than the bound and the read that passed it.
    expect(read).toBeLessThanOrEqual(ResponseBudget.MAX_EVENT_BYTES + 65_536)
    console.log(`an event of ${(ResponseBudget.MAX_EVENT_BYTES + 8 * MIB) / MIB} MiB: refused after ${(read / MIB).toFixed(2)} MiB, in ${(performance.now() - started).toFixed(0)} ms`)
  })

  it("an event of 100,001 line ends is refused before its end", () => {
    const frames = EventFrames.make()
    const { refusal } = EventFrames.push(frames, Buffer.from("data: x\n".repeat(ResponseBudget.MAX_EVENT_LINES + 1)))
    expect(refusal).toBe(`the model stream sent more than ${ResponseBudget.MAX_EVENT_LINES} lines without ending an event, the most Mino reads of one event`)
  })

  it("one event read in 64 KiB reads costs about the same per byte at every size (sweep, figures printed)", async () => {
    const sizes = [1, 2, 4, 8, 16, 30].map((mib) => mib * MIB)
    const figures: Array<string> = []
    for (const size of sizes) {
      const pieces = bigEvent(size)
      const started = performance.now()
      // As the model client reads a reply: framed, then each event's data read and parsed (SseMessages.ts).
      const reader = SseMessages.reader(EventFrames.reads(sourceOf(pieces)), () => new Error("no error event is sent"))
      const values: Array<unknown> = []
      for (let next = await reader.next(); next.done !== true; next = await reader.next()) values.push(next.value)
      const ms = performance.now() - started
      expect(values.length).toBe(1)
      expect((values[0] as { item: { encrypted_content: string } }).item.encrypted_content.length).toBe(size)
      figures.push(`${size / MIB} MiB: ${ms.toFixed(0)} ms, ${(ms / (size / MIB)).toFixed(1)} ms/MiB`)
    }
    // The SDK alone, for comparison, on the sizes it can do in reasonable time.
    const raw: Array<string> = []
    for (const size of [1, 2, 4].map((mib) => mib * MIB)) {
      const started = performance.now()
      const events = await sdkEvents(streamOf(bigEvent(size)))
      const ms = performance.now() - started
      expect(events.length).toBe(1)
      raw.push(`${size / MIB} MiB: ${ms.toFixed(0)} ms, ${(ms / (size / MIB)).toFixed(1)} ms/MiB`)
    }
    console.log(`one event, framed then read by Mino (${sizes.length} sizes): ${figures.join("; ")}`)
    console.log(`the SDK's reader alone: ${raw.join("; ")}`)
  })
})

