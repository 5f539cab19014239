/**
 * How the model client classifies a failure (Failures.ts), without a socket: the
 * SDK's own error classes as it throws them, Mino's limits, the transport's
 * refusals, by table; and generated causes of any shape, by property: the
 * classification is total and every failure has a reason and a line.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import * as OpenAISdk from "openai"
import { CONTEXT_WINDOW_MESSAGE } from "../../src/model/ErrorBody.js"
import * as Failures from "../../src/model/Failures.js"
import { EventTooLarge } from "../../src/model/stream/EventFrames.js"
import { CrossOriginRedirect } from "../../src/model/transport/HttpTransport.js"

const limits: Failures.Limits = { idleTimeoutMs: 2000, requestTimeoutMs: 15 * 60_000 }
const BASE = "https://example.test/v1"
const seen = (typeAt: (index: number) => string | undefined = () => undefined, body: string | undefined = undefined): Failures.Seen => ({
  sdk: OpenAISdk,
  baseURL: BASE,
  body: () => body,
  typeAt
})
const status = (code: number, error: object | undefined, headers: Record<string, string> = {}) =>
  OpenAISdk.APIError.generate(code, error === undefined ? undefined : { error }, undefined, new Headers(headers))
const refused = { code: null, type: "invalid_request_error" }

describe("a failure before the stream started", () => {
  it("is classified by what failed, with the retry or adaptations it allows", () => {
    const connection = new Error("connect ECONNREFUSED 127.0.0.1:9", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) })
    const cases: ReadonlyArray<readonly [string, unknown, Failures.Seen, Failures.Refusal]> = [
      ["no response in time", new Failures.Idle(), seen(), { failure: { reason: "timeout", message: "model request timed out: no response for 2s" } }],
      ["the request's limit", new Failures.Overdue(), seen(), {
        failure: { reason: "timeout", message: "model request stopped after 15 min, the limit for one request, without response.completed" }
      }],
      ["the SDK's timeout", new OpenAISdk.APIConnectionTimeoutError(), seen(), { failure: { reason: "timeout", message: "model request timed out before the response started" } }],
      ["a refused connection: retried", new OpenAISdk.APIConnectionError({ cause: connection }), seen(), {
        failure: { reason: "connection", message: `model request failed: cannot connect to ${BASE}: connect ECONNREFUSED 127.0.0.1:9` },
        retry: { what: "cannot connect to the model endpoint (ECONNREFUSED)", afterMs: undefined }
      }],
      ["a redirect to another origin: not retried", new OpenAISdk.APIConnectionError({ cause: new CrossOriginRedirect(BASE, "https://elsewhere.test/") }), seen(), {
        failure: { reason: "protocol", message: "model request failed: the model endpoint redirected to another origin (https://elsewhere.test/); Mino does not follow it" }
      }],
      ["HTTP 429 with retry-after", status(429, { message: "slow down", ...refused }, { "retry-after": "3" }), seen(), {
        failure: { reason: "http", message: "model request failed: HTTP 429: slow down", status: 429 },
        retry: { what: "HTTP 429 from the model endpoint", afterMs: 3000 }
      }],
      ["HTTP 503 without a reason", status(503, undefined), seen(), {
        failure: { reason: "http", message: "model request failed: HTTP 503: the endpoint gave no reason", status: 503 },
        retry: { what: "HTTP 503 from the model endpoint", afterMs: undefined }
      }],
      ["the context window", status(400, { message: "Your input exceeds the context window of this model.", code: "context_length_exceeded" }), seen(), {
        failure: { reason: "context_window", message: `model request failed: HTTP 400: ${CONTEXT_WINDOW_MESSAGE}`, status: 400 }
      }],
      ["include refused: adapted", status(400, { message: "Unsupported parameter", ...refused, param: "include" }), seen(), {
        failure: { reason: "http", message: "model request failed: HTTP 400: Unsupported parameter", status: 400 },
        adapt: ["without_include"]
      }],
      ["a reasoning item refused where it is", status(400, { message: "'input.1' : property 'id' is unsupported", ...refused }), seen((index) => (index === 1 ? "reasoning" : "message")), {
        failure: { reason: "http", message: "model request failed: HTTP 400: 'input.1' : property 'id' is unsupported", status: 400 },
        adapt: ["without_reasoning"]
      }],
      ["a refusal nothing can change", status(401, { message: "Incorrect API key provided", ...refused }), seen(), {
        failure: { reason: "http", message: "model request failed: HTTP 401: Incorrect API key provided", status: 401 }
      }],
      ["anything else", new Error("boom"), seen(), { failure: { reason: "connection", message: "model request failed: boom" } }],
      // Found by the property below: String() of this value throws.
      ["a thrown value no string can show", { toString: 0 }, seen(), { failure: { reason: "connection", message: "model request failed: a value that cannot be shown" } }]
    ]
    for (const [what, cause, context, expected] of cases) expect({ what, refusal: Failures.opening(cause, context, limits) }).toEqual({ what, refusal: expected })
  })
})

describe("a failure while the stream is read", () => {
  it("is classified by what failed", () => {
    const cases: ReadonlyArray<readonly [string, unknown, Failures.Failure]> = [
      ["no event in time", new Failures.Idle(), { reason: "timeout", message: "model stream timed out: no event for 2s" }],
      ["the request's limit", new Failures.Overdue(), { reason: "timeout", message: "model request stopped after 15 min, the limit for one request, without response.completed" }],
      ["an error the SDK read from the data", new OpenAISdk.APIError(undefined, { message: "overloaded" }, "overloaded", undefined), { reason: "failed", message: "model stream error: overloaded" }],
      ["the context window, so said", new OpenAISdk.APIError(undefined, { code: "context_length_exceeded" }, "x", undefined), { reason: "context_window", message: `model stream error: ${CONTEXT_WINDOW_MESSAGE}` }],
      ["an event too large", new EventTooLarge("the model stream sent more than 32 MiB without ending an event"), { reason: "too_large", message: "the model stream sent more than 32 MiB without ending an event" }],
      ["data that is not JSON: never V8's quote of it", new SyntaxError("Unexpected token s in JSON at position 0: sk-secret"), { reason: "protocol", message: "model stream sent malformed data: an event whose data is not JSON" }],
      ["a drop, by its innermost message", new Error("terminated", { cause: new Error("other side closed") }), { reason: "dropped", message: "model stream dropped before response.completed: other side closed" }]
    ]
    for (const [what, cause, expected] of cases) expect({ what, failure: Failures.reading(cause, OpenAISdk, limits) }).toEqual({ what, failure: expected })
  })
})

const REASONS = new Set(["http", "connection", "dropped", "incomplete", "failed", "timeout", "protocol", "context_window", "too_large"])
const chain: fc.Arbitrary<unknown> = fc.letrec<{ cause: unknown }>((tie) => ({
  cause: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.anything(),
    fc.record({ message: fc.string(), inner: tie("cause") }).map(({ inner, message }) => new Error(message, { cause: inner })),
    fc.record({ message: fc.string(), inner: tie("cause") }).map(({ inner, message }) => new OpenAISdk.APIConnectionError({ message, cause: inner instanceof Error ? inner : undefined })),
    fc.record({ code: fc.integer({ min: 100, max: 599 }), error: fc.anything() }).map(({ code, error }) =>
      OpenAISdk.APIError.generate(code, typeof error === "object" && error !== null ? { error } : undefined, undefined, new Headers())
    )
  )
})).cause
const swept = { causes: 0 }

describe("any cause", () => {
  afterAll(() => console.log(`generated causes classified: ${swept.causes}`))

  it.prop("is classified, before and while the stream, with a reason and a line (1,000 generated causes)", [chain], ([cause]) => {
    const before = Failures.opening(cause, seen(), limits)
    const reading = Failures.reading(cause, OpenAISdk, limits)
    for (const failure of [before.failure, reading]) {
      expect(REASONS.has(failure.reason)).toBe(true)
      expect(typeof failure.message).toBe("string")
    }
    // Only what may pass by itself is retried: a status of 429 or 5xx, or a failed connection.
    if (before.retry !== undefined) expect(before.failure.reason === "connection" || before.failure.status === 429 || (before.failure.status ?? 0) >= 500).toBe(true)
    swept.causes += 1
  }, { fastCheck: { numRuns: 1000 } })
})
