/**
 * When a refused request is sent again (Resending.ts), decided without sending
 * anything: a table of refusals and what follows each, and an endpoint that
 * refuses every sending with generated refusals, followed to the end: it always
 * ends, each adaptation at most once, retries at most `maxRetries`, the failure
 * naming how many there were, and the client remembering only what the rules say.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import type { Adaptation } from "../../src/model/Adaptation.js"
import * as History from "../../src/model/request/History.js"
import type { ModelRequest } from "../../src/model/request/RequestBody.js"
import * as Resending from "../../src/model/Resending.js"
import type { ResponseItem } from "../../src/protocol/ResponseItem.js"

const reasoning: ResponseItem = { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "opaque" }
const question: ResponseItem = { type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }

/** A request with or without reasoning of its own, and with or without an earlier turn that holds reasoning. */
const requestOf = (own: boolean, earlier: boolean): ModelRequest => {
  const history = new History.History()
  if (earlier) history.add([History.question("before"), History.items([reasoning])])
  return { model: "m", instructions: "", history, input: own ? [question, reasoning] : [question], tools: [] }
}

const KEY = "https://example.test/v1 m"
const policy: Resending.Policy = { maxRetries: 2, retryWaitCapMs: 10_000 }
const http429 = { what: "HTTP 429 from the model endpoint", afterMs: undefined }
const firstOf = (request: ModelRequest, memory = Resending.forgetful) => Resending.first(memory, KEY, request)

describe("after a refusal", () => {
  it("what follows each refusal, by the attempt and the request", () => {
    const plain = requestOf(false, false)
    const attempt = (number: number, shape: Partial<Resending.Shape> = {}): Resending.Attempt => ({ number, shape: { ...firstOf(plain).shape, ...shape } })
    const cases: ReadonlyArray<readonly [string, ModelRequest, Resending.Attempt, Resending.Refused, unknown]> = [
      ["a 429, first sending: wait 1 s", plain, attempt(1), { retry: http429 }, {
        _tag: "Retry",
        waitMs: 1000,
        message: "HTTP 429 from the model endpoint; retrying in 1 s (1/2)",
        attempt: attempt(2)
      }],
      ["a 429, second sending: wait 2 s", plain, attempt(2), { retry: http429 }, {
        _tag: "Retry",
        waitMs: 2000,
        message: "HTTP 429 from the model endpoint; retrying in 2 s (2/2)",
        attempt: attempt(3)
      }],
      ["retry-after beyond the cap: the cap", plain, attempt(1), { retry: { ...http429, afterMs: 60_000 } }, {
        _tag: "Retry",
        waitMs: 10_000,
        message: "HTTP 429 from the model endpoint; retrying in 10 s (1/2)",
        attempt: attempt(2)
      }],
      ["a 429 after two retries: fails, saying so", plain, attempt(3), { retry: http429 }, { _tag: "Fail", suffix: " (after 2 retries)" }],
      ["a refusal that allows nothing after one retry", plain, attempt(2), {}, { _tag: "Fail", suffix: " (after 1 retry)" }],
      ["a refusal that allows nothing", plain, attempt(1), {}, { _tag: "Fail", suffix: "" }],
      ["include refused", plain, attempt(1), { adapt: ["without_include"] }, {
        _tag: "Adapt",
        adaptation: "without_include",
        message: "the endpoint does not return encrypted reasoning for m; asking again without it (remembered while Mino runs)",
        attempt: attempt(1, { include: false, adapted: new Set(["without_include"]) }),
        memory: { ...Resending.forgetful, withoutInclude: new Set([KEY]) }
      }],
      ["include refused again, already left out: fails", plain, attempt(1, { include: false }), { adapt: ["without_include"] }, { _tag: "Fail", suffix: "" }],
      ["earlier reasoning, none sent: the include instead", plain, attempt(1), { adapt: ["without_earlier_reasoning", "without_include"] }, {
        _tag: "Adapt",
        adaptation: "without_include",
        message: "the endpoint does not return encrypted reasoning for m; asking again without it (remembered while Mino runs)",
        attempt: attempt(1, { include: false, adapted: new Set(["without_include"]) }),
        memory: { ...Resending.forgetful, withoutInclude: new Set([KEY]) }
      }],
      ["reasoning refused, none sent: fails", plain, attempt(1), { adapt: ["without_reasoning"] }, { _tag: "Fail", suffix: "" }],
      ["an adaptation comes before a retry", plain, attempt(1), { adapt: ["without_optional"], retry: http429 }, {
        _tag: "Adapt",
        adaptation: "without_optional",
        message: expect.stringContaining("asking again without the optional ones"),
        attempt: attempt(1, { optional: false, adapted: new Set(["without_optional"]) }),
        memory: Resending.forgetful
      }]
    ]
    for (const [what, request, sent, refused, expected] of cases) {
      expect({ what, next: Resending.next(request, KEY, Resending.forgetful, sent, refused, policy) }).toEqual({ what, next: expected })
    }
  })

  it("reasoning refused: left out of this request, and of every later one while the client lives", () => {
    const request = requestOf(true, true)
    const next = Resending.next(request, KEY, Resending.forgetful, firstOf(request), { adapt: ["without_reasoning"] }, policy)
    expect(next._tag === "Adapt" ? [next.attempt.shape.reasoning, next.memory.reasoningRefused] : next).toEqual([false, true])
    if (next._tag === "Adapt") expect(firstOf(request, next.memory).shape.reasoning).toBe(false)
  })

  it("earlier reasoning refused: the request leaves out the turns before it, the client remembers nothing", () => {
    const request = requestOf(false, true)
    const next = Resending.next(request, KEY, Resending.forgetful, firstOf(request), { adapt: ["without_earlier_reasoning"] }, policy)
    expect(next._tag === "Adapt" ? [next.attempt.shape.withoutReasoningBefore, next.memory] : next).toEqual([1, Resending.forgetful])
  })

  it("the optional fields are remembered as left out only once a request without them was taken", () => {
    const { shape } = firstOf(requestOf(false, false))
    expect(Resending.taken(Resending.forgetful, shape)).toBe(Resending.forgetful)
    const remembered = Resending.taken(Resending.forgetful, { ...shape, optional: false })
    expect(remembered.optionalRefused).toBe(true)
    expect(Resending.first(remembered, KEY, requestOf(false, false)).shape.optional).toBe(false)
  })
})

const ADAPTATIONS: ReadonlyArray<Adaptation> = ["without_include", "without_earlier_reasoning", "without_reasoning", "without_optional"]
const refusedArb: fc.Arbitrary<Resending.Refused> = fc.record({
  retry: fc.option(fc.record({ what: fc.constant("HTTP 503 from the model endpoint"), afterMs: fc.option(fc.nat(100_000), { nil: undefined }) }), { nil: undefined }),
  adapt: fc.option(fc.shuffledSubarray([...ADAPTATIONS]), { nil: undefined })
})
const swept = { endpoints: 0, sendings: 0 }

describe("an endpoint that refuses every sending", () => {
  afterAll(() => console.log(`refusing endpoints followed to the end: ${swept.endpoints}, ${swept.sendings} sendings`))

  it.prop("ends after at most 1 + maxRetries + 4 sendings, each adaptation once, the failure naming the retries (2,000 generated endpoints)", [
    fc.boolean(),
    fc.boolean(),
    fc.integer({ min: 0, max: 4 }),
    fc.array(refusedArb, { minLength: 12, maxLength: 12 })
  ], ([own, earlier, maxRetries, refusals]) => {
    const request = requestOf(own, earlier)
    let memory = Resending.forgetful
    let attempt = firstOf(request)
    const adaptations: Array<Adaptation> = []
    let retries = 0
    let sendings = 1
    let failed = false
    for (const refused of refusals) {
      const next = Resending.next(request, KEY, memory, attempt, refused, { maxRetries, retryWaitCapMs: 10_000 })
      if (next._tag === "Fail") {
        expect(next.suffix).toBe(retries === 0 ? "" : ` (after ${retries} ${retries === 1 ? "retry" : "retries"})`)
        failed = true
        break
      }
      sendings += 1
      if (next._tag === "Retry") {
        retries += 1
        expect(next.waitMs).toBeLessThanOrEqual(10_000)
        expect(next.attempt).toEqual({ number: attempt.number + 1, shape: attempt.shape })
      } else {
        adaptations.push(next.adaptation)
        expect(refused.adapt).toContain(next.adaptation)
        expect(next.attempt.number).toBe(attempt.number)
        memory = next.memory
      }
      attempt = next.attempt
    }
    // Twelve refusals are more than the sendings the rules allow: every endpoint was followed to its failure.
    expect(failed).toBe(true)
    expect(new Set(adaptations).size).toBe(adaptations.length)
    expect(retries).toBeLessThanOrEqual(maxRetries)
    expect(sendings).toBeLessThanOrEqual(1 + maxRetries + ADAPTATIONS.length)
    // Reasoning is only ever left out when the request had some to leave out.
    if (!own && !earlier) expect(adaptations.filter((adaptation) => adaptation.includes("reasoning"))).toEqual([])
    expect(memory.withoutInclude.has(KEY)).toBe(adaptations.includes("without_include"))
    expect(memory.reasoningRefused).toBe(adaptations.includes("without_reasoning"))
    expect(memory.optionalRefused).toBe(false)
    swept.endpoints += 1
    swept.sendings += sendings
  }, { fastCheck: { numRuns: 2000 } })
})
