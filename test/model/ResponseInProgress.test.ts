/**
 * The pure core of stream reading (ResponseInProgress.ts): what an event does to a
 * response in progress. Generated event sequences, wilder than any server's (ids and
 * indexes drawn from a small pool so that they collide, messages renamed, items
 * without ids, text that does or does not match what streamed, failures anywhere),
 * are read three ways: by the reader as it was before the core existed (the oracle,
 * test/model/support/StreamEventsBefore.ts), by the new reader, and again from
 * every intermediate state (a state is never changed in place). Cut streams: the
 * end is a failure exactly when no response completed, and it has one wording.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { CONTEXT_WINDOW_MESSAGE } from "../../src/model/ErrorBody.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as ResponseInProgress from "../../src/model/stream/ResponseInProgress.js"
import * as StreamEvents from "../../src/model/stream/StreamEvents.js"
import * as Before from "./support/StreamEventsBefore.js"

const RUNS = 3000

const id = fc.option(fc.constantFrom("a", "b", "c"), { nil: undefined })
const index = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined })
const text = fc.constantFrom("", "he", "hello", "hello world", "wor", "x")

const message = fc.record({ id, text, refusal: fc.boolean() }).map(({ id, text, refusal }): ResponseItem => ({
  ...(id === undefined ? {} : { id: `m_${id}` }),
  type: "message",
  role: "assistant",
  content: [refusal ? { type: "refusal", refusal: text } : { type: "output_text", text, annotations: [] }]
}))
const item = fc.oneof(
  { weight: 3, arbitrary: message },
  { weight: 1, arbitrary: fc.constant<ResponseItem>({ id: "fc_1", type: "function_call", call_id: "call_1", name: "bash", arguments: "{}" }) },
  { weight: 1, arbitrary: fc.constant<ResponseItem>({ type: "reasoning", summary: [] }) }
)

/** One event on the wire, any of the kinds the reader acts on, and some it does not. */
const event: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ id, index, delta: fc.constantFrom("he", "llo", " wor", "ld", "x", ""), refusal: fc.boolean() }).map((delta) => ({
      type: delta.refusal ? "response.refusal.delta" : "response.output_text.delta",
      delta: delta.delta,
      ...(delta.id === undefined ? {} : { item_id: `m_${delta.id}` }),
      ...(delta.index === undefined ? {} : { output_index: delta.index })
    }))
  },
  {
    weight: 4,
    arbitrary: fc.record({ index, item }).map(({ index, item }) => ({
      type: "response.output_item.done",
      item,
      ...(index === undefined ? {} : { output_index: index })
    }))
  },
  {
    weight: 2,
    arbitrary: fc.record({
      output: fc.option(fc.array(item, { maxLength: 4 }), { nil: undefined }),
      status: fc.constantFrom(undefined, "completed", "incomplete", "failed"),
      error: fc.constantFrom(undefined, null, { message: "boom" }, { code: "context_length_exceeded" })
    }).map(({ error, output, status }) => ({
      type: "response.completed",
      response: {
        id: "r",
        ...(output === undefined ? {} : { output }),
        ...(status === undefined ? {} : { status }),
        ...(error === undefined ? {} : { error }),
        usage: { input_tokens: 3, output_tokens: 4 }
      }
    }))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      { type: "response.created", response: { id: "r" } },
      { type: "response.function_call_arguments.delta", delta: "{" },
      { type: "response.output_text.delta" },
      { type: "response.output_item.done" },
      { type: "response.completed" },
      { type: "response.failed", response: { error: { message: "failed" } } },
      { type: "response.incomplete", response: { incomplete_details: { reason: "max_output_tokens" } } },
      { type: "error", code: 500, message: "server error" },
      null,
      "text"
    )
  }
)

const events = fc.array(event, { maxLength: 24 })

/** Reads `events` through the core from `progress`, keeping every state it passes. */
const readAll = (progress: ResponseInProgress.ResponseInProgress, events: ReadonlyArray<unknown>) => {
  const states = [progress]
  const interpretations: Array<StreamEvents.Interpretation> = []
  for (const event of events) {
    const step = StreamEvents.read(states.at(-1)!, event)
    states.push(step.progress)
    interpretations.push(step.interpretation)
  }
  return { states, interpretations }
}

const swept = { streams: 0, events: 0 }

describe("a response in progress", () => {
  afterAll(() => console.log(`held to the reader before the core: ${swept.streams} generated streams, ${swept.events} events`))

  it.prop(`reads every event as the reader before the core did (${RUNS} generated streams)`, [events], ([events]) => {
    const oracle = Before.reader()
    const reader = StreamEvents.reader()
    let compared = 0
    for (const event of events) {
      expect(reader(event)).toEqual(oracle(event))
      compared += 1
    }
    expect(compared).toBe(events.length)
    swept.streams += 1
    swept.events += compared
  }, { fastCheck: { numRuns: RUNS } })

  it.prop(`never changes a state in place: read again from any state, the rest reads the same (${RUNS} generated streams)`, [events, fc.nat()], ([events, at]) => {
    const first = readAll(ResponseInProgress.empty, events)
    const cut = events.length === 0 ? 0 : at % events.length
    const again = readAll(first.states[cut]!, events.slice(cut))
    expect(again.interpretations).toEqual(first.interpretations.slice(cut))
    expect(readAll(ResponseInProgress.empty, events).interpretations).toEqual(first.interpretations)
  }, { fastCheck: { numRuns: RUNS } })

  it.prop(`a stream cut anywhere ended early exactly when no response completed before the cut (${RUNS} generated streams)`, [events, fc.nat()], ([events, at]) => {
    const cut = events.slice(0, events.length === 0 ? 0 : at % (events.length + 1))
    const { interpretations, states } = readAll(ResponseInProgress.empty, cut)
    const completed = interpretations.some((interpretation) =>
      !ResponseInProgress.isFailure(interpretation) && interpretation.some((event) => event._tag === "Completed")
    )
    expect(ResponseInProgress.end(states.at(-1)!)).toEqual(completed ? undefined : ResponseInProgress.ENDED_EARLY)
  }, { fastCheck: { numRuns: RUNS } })

  it("the end of a stream, by what came before it", () => {
    const cases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, ResponseInProgress.Failure | undefined]> = [
      ["nothing", [], { reason: "incomplete", message: "model stream ended before response.completed" }],
      ["text only", [{ type: "response.output_text.delta", delta: "hi" }], { reason: "incomplete", message: "model stream ended before response.completed" }],
      ["a failed completion", [{ type: "response.completed", response: { status: "failed" } }], { reason: "incomplete", message: "model stream ended before response.completed" }],
      ["a completed response", [{ type: "response.completed", response: { id: "r" } }], undefined]
    ]
    for (const [what, events, expected] of cases) {
      const { states } = readAll(ResponseInProgress.empty, events)
      expect({ what, end: ResponseInProgress.end(states.at(-1)!) }).toEqual({ what, end: expected })
    }
  })

  it("what a response.completed says of itself", () => {
    const cases: ReadonlyArray<readonly [ResponseInProgress.CompletedBody, ResponseInProgress.Failure | undefined]> = [
      [{}, undefined],
      [{ status: "completed" }, undefined],
      [{ status: null, error: null }, undefined],
      [{ status: "incomplete" }, { reason: "incomplete", message: "model response incomplete: no reason given" }],
      [{ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }, { reason: "incomplete", message: "model response incomplete: max_output_tokens" }],
      [{ status: "queued" }, { reason: "failed", message: "model response ended with status \"queued\", not completed" }],
      [{ status: "completed", error: { message: "boom" } }, { reason: "failed", message: "model response failed: boom" }],
      [{ error: { code: "context_length_exceeded" } }, { reason: "context_window", message: `model response failed: ${CONTEXT_WINDOW_MESSAGE}` }]
    ]
    for (const [response, expected] of cases) expect({ response, verdict: ResponseInProgress.verdict(response) }).toEqual({ response, verdict: expected })
  })

  it("a hostile stream of 4,900 anonymous messages keeps no claimed text in the way of the next message (the work stays linear)", () => {
    const length = (queue: ResponseInProgress.Queue<ResponseInProgress.Begun>) => {
      let count = 0
      for (let stack = queue.front; stack !== undefined; stack = stack.tail) count += 1
      for (let stack = queue.back; stack !== undefined; stack = stack.tail) count += 1
      return count
    }
    let progress = ResponseInProgress.empty
    let longest = 0
    let shown = ""
    for (let message = 0; message < 4900; message++) {
      for (const event of [
        { type: "response.output_text.delta", delta: "x" },
        { type: "response.output_item.done", item: { type: "message", role: "assistant", content: [{ type: "output_text", text: "xy" }] } }
      ]) {
        const step = StreamEvents.read(progress, event)
        progress = step.progress
        if (ResponseInProgress.isFailure(step.interpretation)) throw new Error(step.interpretation.message)
        for (const emitted of step.interpretation) if (emitted._tag === "TextDelta") shown += emitted.text
      }
      longest = Math.max(longest, length(progress.anonymousBegun))
    }
    expect(shown).toBe("xy".repeat(4900))
    expect(longest).toBeLessThanOrEqual(1)
  })

  it("one text streamed under an id and an index, then finished without either, is shown once", () => {
    const { interpretations, states } = readAll(ResponseInProgress.empty, [
      { type: "response.output_text.delta", item_id: "m", output_index: 0, delta: "hel" },
      { type: "response.output_item.done", item: { type: "message", role: "assistant", content: [{ type: "output_text", text: "hello" }] } },
      { type: "response.completed", response: { id: "r" } }
    ])
    expect(interpretations.flat().flatMap((event) => ("_tag" in event && event._tag === "TextDelta" ? [event.text] : []))).toEqual(["hel", "lo"])
    expect(states.at(-1)!.completed).toBe(true)
  })
})
