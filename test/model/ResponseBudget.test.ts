/**
 * The rule for how much of one response Mino holds before it completes
 * (ResponseBudget.ts), as a table: each charge, the budget after it or the line
 * that ends the response; the event bounds at and past their limits; and the
 * size of an item, without recursion.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ResponseBudget from "../../src/model/stream/ResponseBudget.js"
import * as StreamEvents from "../../src/model/stream/StreamEvents.js"

const MIB = 1024 * 1024
const { MAX_EVENT_BYTES, MAX_EVENT_LINES, MAX_ITEMS, MAX_KEPT_BYTES } = ResponseBudget
const KEPT = "the model's response grew past 16 MiB before it completed, the most Mino keeps of one response"
const ITEMS = `the model's response grew past ${MAX_ITEMS} items before it completed, the most Mino keeps of one response`

describe("charging a response's budget", () => {
  const cases: ReadonlyArray<readonly [string, ResponseBudget.Budget, number, number, ResponseBudget.Budget | string]> = [
    ["the first item", ResponseBudget.empty, 1, 100, { items: 1, kept: 100 }],
    ["text, no new item", { items: 3, kept: 10 }, 0, 5, { items: 3, kept: 15 }],
    ["up to the kept bound exactly", { items: 1, kept: MAX_KEPT_BYTES - 10 }, 0, 10, { items: 1, kept: MAX_KEPT_BYTES }],
    ["one character past it", { items: 1, kept: MAX_KEPT_BYTES }, 0, 1, KEPT],
    ["one large item past it", { items: 15, kept: 15 * MIB }, 1, MIB + 1, KEPT],
    ["up to the item bound exactly", { items: MAX_ITEMS - 1, kept: 0 }, 1, 0, { items: MAX_ITEMS, kept: 0 }],
    ["one item past it", { items: MAX_ITEMS, kept: 0 }, 1, 0, ITEMS],
    ["past both: the items are named", { items: MAX_ITEMS, kept: MAX_KEPT_BYTES }, 1, 1, ITEMS]
  ]
  for (const [name, budget, items, kept, expected] of cases) {
    it(name, () => {
      const charged = ResponseBudget.charge(budget, items, kept)
      if (typeof expected === "string") {
        expect(ResponseBudget.isExceeded(charged)).toBe(true)
        expect(charged).toEqual({ _tag: "Exceeded", message: expected })
      } else {
        expect(charged).toEqual(expected)
      }
    })
  }

  it("leaves the budget it was given as it was", () => {
    const budget = { items: 2, kept: 7 }
    ResponseBudget.charge(budget, 1, 1)
    expect(budget).toEqual({ items: 2, kept: 7 })
  })
})

describe("one event's bounds", () => {
  const cases: ReadonlyArray<readonly [number, number, string | undefined]> = [
    [0, 0, undefined],
    [MAX_EVENT_BYTES, MAX_EVENT_LINES, undefined],
    [MAX_EVENT_BYTES + 1, 0, "the model stream sent more than 32 MiB without ending an event, the most Mino reads of one event"],
    [10, MAX_EVENT_LINES + 1, `the model stream sent more than ${MAX_EVENT_LINES} lines without ending an event, the most Mino reads of one event`],
    [MAX_EVENT_BYTES + 1, MAX_EVENT_LINES + 1, "the model stream sent more than 32 MiB without ending an event, the most Mino reads of one event"]
  ]
  for (const [bytes, lines, expected] of cases) {
    it(`${bytes} bytes, ${lines} line ends: ${expected === undefined ? "read on" : "refused"}`, () => {
      expect(ResponseBudget.eventRefusal(bytes, lines)).toBe(expected)
    })
  }
})

describe("an item's size", () => {
  const cases: ReadonlyArray<readonly [string, unknown, number]> = [
    ["a string: its characters and one", "abc", 4],
    ["a number", 42, 1],
    ["null", null, 1],
    ["an object: keys, values, and one each", { type: "reasoning", id: "rs_1" }, 1 + 4 + 10 + 2 + 5],
    ["an array", [1, "ab", [true]], 1 + 1 + 3 + 1 + 1],
    ["a key `__proto__` counts like any other", JSON.parse("{\"__proto__\":\"x\"}"), 1 + 9 + 2]
  ]
  for (const [name, value, expected] of cases) {
    it(name, () => expect(ResponseBudget.size(value)).toBe(expected))
  }

  it("an item nested 1,000,000 deep is measured without a stack overflow", () => {
    let deep: unknown = "end"
    for (let i = 0; i < 1_000_000; i++) deep = [deep]
    expect(ResponseBudget.size(deep)).toBe(1_000_000 + 4)
  })
})

describe("the reader charges what it keeps", () => {
  it("one-character deltas for ever end at the bound, each piece charged what keeping it costs", () => {
    const interpret = StreamEvents.reader()
    let deltas = 0
    let result: StreamEvents.Interpretation = []
    while (!StreamEvents.isFailure(result) && deltas < 2 * MAX_KEPT_BYTES) {
      result = interpret({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, delta: "y" })
      deltas += 1
    }
    expect(result).toEqual({ reason: "too_large", message: KEPT })
    // Ended after about 16 MiB of what keeping them costs (33 each), not 16 Mi deltas.
    expect(deltas).toBe(Math.floor(MAX_KEPT_BYTES / (1 + ResponseBudget.PIECE_COST)) + 1)
    console.log(`one-character deltas: the reader ended after ${deltas} of them`)
  })

  it("a finished item is charged before it is kept: the one that passes the bound is refused", () => {
    const interpret = StreamEvents.reader()
    const item = (i: number) => ({ type: "response.output_item.done", output_index: i, item: { type: "reasoning", id: `rs_${i}`, encrypted_content: "E".repeat(MIB) } })
    // Each is 1 MiB and a few dozen characters more: fifteen fit, the sixteenth would pass 16 MiB.
    const results = Array.from({ length: 16 }, (_, i) => interpret(item(i)))
    expect(results.slice(0, 15).every((result) => !StreamEvents.isFailure(result))).toBe(true)
    expect(results[15]).toEqual({ reason: "too_large", message: KEPT })
  })
})
