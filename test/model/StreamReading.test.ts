/**
 * How a stream becomes a response and text on the screen (StreamEvents.ts), swept
 * over generated streams: the items of 1-4 messages and calls, each stream stripped
 * of ids the way real servers leave them out (no item_id or output_index on deltas
 * as Codex's test servers, no id on the final message, no output_index on finished
 * items as llama.cpp, no output in response.completed, or an empty one), deltas cut
 * short, output_item.done sent out of order (when an id or an index pairs them with their
 * deltas). Invariants: the text shown is each
 * message's text exactly once, in order; the response is completed.output when it
 * has items, else the finished items in output_index order; a completed.output that
 * renames the finished messages (new ids, new places) shows nothing again.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as ErrorBody from "../../src/model/ErrorBody.js"
import type { ModelEvent } from "../../src/protocol/ModelEvent.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as StreamEvents from "../../src/model/stream/StreamEvents.js"

interface Shape {
  readonly items: ReadonlyArray<{ readonly kind: "message" | "call"; readonly text: string }>
  /** What the server leaves out. */
  readonly deltaIds: "both" | "item_id" | "output_index" | "none"
  readonly finalMessageId: boolean
  readonly doneIndex: boolean
  /** `renamed`: every message under a new id, after a reasoning item that moves them all one place on. */
  readonly completedOutput: "full" | "missing" | "empty" | "renamed"
  /** How many characters of each message the deltas carry before they stop (the rest only in the whole item). */
  readonly cut: number
  /** Finished items sent in reverse order (each with its output_index, when it has one). */
  readonly reversed: boolean
}

const word = fc.stringMatching(/^[a-z]{1,6}$/)
const shapeArb: fc.Arbitrary<Shape> = fc.record({
  items: fc.array(
    fc.record({ kind: fc.constantFrom("message" as const, "call" as const), text: fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => words.join(" ")) }),
    { minLength: 1, maxLength: 4 }
  ),
  deltaIds: fc.constantFrom("both" as const, "item_id" as const, "output_index" as const, "none" as const),
  finalMessageId: fc.boolean(),
  doneIndex: fc.boolean(),
  completedOutput: fc.constantFrom("full" as const, "missing" as const, "empty" as const, "renamed" as const),
  cut: fc.integer({ min: 0, max: 30 }),
  reversed: fc.boolean()
})

const build = (shape: Shape) => {
  const items: Array<ResponseItem> = shape.items.map((item, index) =>
    item.kind === "message"
      ? {
        ...(shape.finalMessageId ? { id: `msg_${index}` } : {}),
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: item.text, annotations: [] }]
      }
      : { id: `fc_${index}`, type: "function_call", status: "completed", call_id: `call_${index}`, name: "bash", arguments: "{}" }
  )
  const events: Array<ResponseItem> = [{ type: "response.created", response: { id: "resp_1" } }]
  const done: Array<ResponseItem> = []
  shape.items.forEach((item, index) => {
    if (item.kind === "message") {
      // The deltas name the item as the server does; the whole item may differ (no id).
      const where = {
        ...(shape.deltaIds === "both" || shape.deltaIds === "item_id" ? { item_id: `msg_${index}` } : {}),
        ...(shape.deltaIds === "both" || shape.deltaIds === "output_index" ? { output_index: index } : {})
      }
      const streamed = item.text.slice(0, shape.cut)
      for (const piece of streamed.match(/.{1,3}/gs) ?? []) events.push({ type: "response.output_text.delta", ...where, delta: piece })
    }
    const finished = { type: "response.output_item.done", ...(shape.doneIndex ? { output_index: index } : {}), item: items[index] }
    if (shape.reversed) done.unshift(finished)
    else events.push(finished)
  })
  events.push(...done)
  // Renamed as LiteLLM's bridge did before it aligned its ids: the same messages, in the same order.
  const renamed: Array<ResponseItem> = [
    { id: "rs_final", type: "reasoning", summary: [] },
    ...items.map((item, index) => (item["type"] === "message" ? { ...item, id: `msg_final_${index}` } : item))
  ]
  const output = shape.completedOutput === "full"
    ? { output: items }
    : shape.completedOutput === "renamed"
    ? { output: renamed }
    : shape.completedOutput === "empty"
    ? { output: [] }
    : {}
  events.push({ type: "response.completed", response: { id: "resp_1", status: "completed", ...output } })
  return { items: shape.completedOutput === "renamed" ? renamed : items, events }
}

const read = (events: ReadonlyArray<ResponseItem>) => {
  const interpret = StreamEvents.reader()
  const emitted: Array<ModelEvent> = []
  for (const event of events) {
    const result = interpret(event)
    if (StreamEvents.isFailure(result)) throw new Error(result.message)
    emitted.push(...result)
  }
  return emitted
}

describe("reading a stream", () => {
  it.prop("shows each message's text once and yields the output the stream says, whatever ids are missing (2,000 generated streams)", [shapeArb], ([shape]) => {
    const { items, events } = build(shape)
    // Finished items out of order and without an index cannot be put back in order: no server sends them.
    fc.pre(!(shape.reversed && !shape.doneIndex))
    // Without an identity the deltas and the item share (the same id, or an index), only order pairs them:
    // then the items must finish in order.
    const shared = shape.deltaIds === "both" || shape.deltaIds === "output_index" || (shape.deltaIds === "item_id" && shape.finalMessageId)
    fc.pre(!(shape.reversed && !shared))
    const emitted = read(events)
    const text = emitted.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")
    const expected = shape.items.filter((item) => item.kind === "message").map((item) => item.text)
    if (!shape.reversed) expect(text).toBe(expected.join(""))
    else expect([...text].sort().join("")).toBe([...expected.join("")].sort().join(""))
    const completed = emitted.at(-1)
    expect(completed?._tag).toBe("Completed")
    if (completed?._tag === "Completed") expect(completed.response.output).toEqual(items)
  }, { fastCheck: { numRuns: 2000 } })

  it("completed.output wins over the finished items when it has items", () => {
    const emitted = read([
      { type: "response.output_item.done", output_index: 0, item: { id: "m_stream", type: "message", role: "assistant", content: [{ type: "output_text", text: "streamed" }] } },
      { type: "response.completed", response: { id: "r", output: [{ id: "m_final", type: "message", role: "assistant", content: [{ type: "output_text", text: "final" }] }] } }
    ])
    const completed = emitted.at(-1)
    expect(completed?._tag === "Completed" ? completed.response.output.map((item) => item["id"]) : []).toEqual(["m_final"])
  })

  it("a response.completed without output and without finished items has no output (the Agent says so)", () => {
    const completed = read([{ type: "response.completed", response: { id: "r" } }]).at(-1)
    expect(completed?._tag === "Completed" ? completed.response.output : undefined).toEqual([])
  })
})

describe("what an error said", () => {
  const cases: ReadonlyArray<readonly [string, ErrorBody.Problem, boolean]> = [
    ["OpenAI's code", { code: "context_length_exceeded", message: "Your input exceeds the context window of this model." }, true],
    ["Azure's wording", { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens." }, true],
    ["vLLM, numeric code", { code: 400, message: "This model's maximum context length is 4096 tokens. However, you requested 5097 tokens." }, true],
    ["vLLM's other wording", { code: 400, message: "The decoder prompt (length 5000) is longer than the maximum model length of 4096." }, true],
    ["llama.cpp's type, numeric code", { code: 400, type: "exceed_context_size_error", message: "request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it" }, true],
    ["Ollama", { message: "the input length exceeds the context length" }, true],
    ["LiteLLM", { code: "400", message: "litellm.ContextWindowExceededError: prompt is too long" }, true],
    ["xAI", { message: "This model's maximum prompt length is 131072 but the request contains 140213 tokens." }, true],
    ["a rate limit", { code: 429, message: "Rate limit reached" }, false],
    ["a bad request", { code: "invalid_value", message: "Invalid value for 'input'" }, false]
  ]
  for (const [name, problem, overflow] of cases) {
    it(`${name}: ${overflow ? "the context window" : "not the context window"}`, () => {
      expect(ErrorBody.isContextWindow(problem)).toBe(overflow)
    })
  }

  it("an error event with a numeric code keeps its message", () => {
    const result = StreamEvents.reader()({ type: "error", code: 500, message: "The server had an error" })
    expect(result).toEqual({ reason: "failed", message: "model stream error: The server had an error" })
  })
})
