/**
 * The tokens an endpoint reports (`usage` in `response.completed`): kept when
 * both counts are whole and not negative, and otherwise dropped without
 * failing the response — a hostile or sloppy endpoint can neither fail a turn
 * nor put anything but two numbers into the session file through it.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as StreamEvents from "../../src/model/stream/StreamEvents.js"
import { usageOf } from "../../src/protocol/ModelEvent.js"

const completedWith = (usage: unknown) => {
  const interpretation = StreamEvents.reader()({ type: "response.completed", response: { id: "r", status: "completed", output: [], usage } })
  if (StreamEvents.isFailure(interpretation)) throw new Error("the response failed")
  const completed = interpretation.find((event) => event._tag === "Completed")
  if (completed?._tag !== "Completed") throw new Error("no Completed event")
  return completed.response
}

describe("usage", () => {
  it("kept as two counts; anything else is no usage, and the response still completes", () => {
    expect(completedWith({ input_tokens: 12, output_tokens: 3, total_tokens: 15, input_tokens_details: { cached_tokens: 1 } }).usage).toEqual({ input_tokens: 12, output_tokens: 3 })
    for (const bad of [undefined, null, "12", [], { input_tokens: 1 }, { input_tokens: -1, output_tokens: 2 }, { input_tokens: 1.5, output_tokens: 2 }, { input_tokens: 2 ** 60, output_tokens: 1 }, { input_tokens: "1", output_tokens: 1 }]) {
      expect(completedWith(bad).usage).toBeUndefined()
    }
  })

  it("over 2,000 generated values: usageOf gives two safe whole counts or nothing", () => {
    fc.assert(fc.property(fc.oneof(fc.anything(), fc.record({ input_tokens: fc.oneof(fc.integer(), fc.double(), fc.string()), output_tokens: fc.oneof(fc.integer(), fc.double()) })), (value) => {
      const usage = usageOf(value)
      if (usage !== undefined) {
        expect(Object.keys(usage).sort()).toEqual(["input_tokens", "output_tokens"])
        for (const count of Object.values(usage)) expect(Number.isSafeInteger(count) && count >= 0).toBe(true)
      }
    }), { numRuns: 2000 })
  })
})
