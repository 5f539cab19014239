/**
 * Which refusals change the request (Adaptation.asks, a table of what servers
 * really answer), and how the real client applies them against a loopback
 * server: `include` is remembered per endpoint and model, a refusal naming
 * `param: "include"` adapts whatever its message, and vLLM's bare "Encrypted
 * content is not supported." leaves out the earlier reasoning when there is some
 * and the `include` when there is none, each change tried once.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Adaptation from "../../src/model/Adaptation.js"
import type { Said } from "../../src/model/ErrorBody.js"
import * as History from "../../src/model/request/History.js"
import { ModelClient, type ModelError, type ModelEvent, type ModelRequest } from "../../src/model/ModelClient.js"
import { isObject, type ResponseItem } from "../../src/protocol/ResponseItem.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import { Secrets } from "../../src/security/Secrets.js"

describe("Adaptation.asks", () => {
  const include = "Encrypted content is not supported with this model."
  const cases: ReadonlyArray<readonly [string, number, Said, ReadonlyArray<Adaptation.Adaptation>]> = [
    ["OpenAI refusing include", 400, { message: include, type: "invalid_request_error", param: "include", code: null }, ["without_include"]],
    ["param include alone, another wording", 400, { message: "Unsupported parameter: 'include' is not supported for this model.", param: "include" }, ["without_include"]],
    ["the include wording alone (LiteLLM wraps it, param null)", 400, { message: `litellm.BadRequestError: OpenAIException - {"message": "${include}", "param": "include"}`, code: "400" }, ["without_include"]],
    ["invalid_encrypted_content by code", 400, { message: "Some message.", code: "invalid_encrypted_content" }, ["without_earlier_reasoning"]],
    ["unverifiable by wording", 400, { message: "The encrypted content for item rs_1 could not be verified." }, ["without_earlier_reasoning"]],
    ["llama.cpp: reasoning without content", 400, { message: "item['content'] is not an array", code: 400, type: "invalid_request_error" }, ["without_earlier_reasoning"]],
    ["llama.cpp: reasoning with empty content", 400, { message: "item['content'] is empty", code: 400 }, ["without_earlier_reasoning"]],
    ["llama.cpp: reasoning content without text", 400, { message: "item['content']['text'] is not a string", code: 400 }, ["without_earlier_reasoning"]],
    ["vLLM's bare refusal: the earlier reasoning, else the include", 400, { message: "Encrypted content is not supported.", code: 400, type: "BadRequestError" }, ["without_earlier_reasoning", "without_include"]],
    ["another llama.cpp refusal", 400, { message: "Cannot determine type of 'item'", code: 400 }, []],
    ["a context overflow", 400, { message: "This model's maximum context length is 4096 tokens." }, []],
    ["the include wording on a 500", 500, { message: include, param: "include" }, []],
    ["param include on a 401", 401, { message: "Unauthorized", param: "include" }, []],
    ["nothing said", 400, {}, []]
  ]
  for (const [name, status, said, expected] of cases) {
    it(`${name}: ${expected.length === 0 ? "nothing" : expected.join(", then ")}`, () => {
      expect(Adaptation.asks(status, said)).toEqual(expected)
    })
  }
})

const KEY = "sk-adaptation-0123456789"

const userMessage = (text: string): ResponseItem => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })

const earlierReasoning: ResponseItem = { id: "rs_earlier", type: "reasoning", summary: [], encrypted_content: "gAAAA-from-another-endpoint" }

const ask = (model: string, history?: History.History): ModelRequest => ({
  model,
  instructions: "Be brief.",
  ...(history === undefined ? {} : { history }),
  input: [userMessage(history === undefined ? "hi" : "now")],
  tools: []
})

/** An earlier turn whose reasoning another endpoint wrote. */
const earlierTurn = (): History.History => {
  const history = new History.History()
  history.add([History.question("before"), History.items([earlierReasoning])])
  return history
}

const hasInclude = (body: unknown): boolean => isObject(body) && body["include"] !== undefined

const reasoningSent = (body: unknown): boolean =>
  isObject(body) && Array.isArray(body["input"]) && body["input"].some((item) => isObject(item) && item["type"] === "reasoning")

const refusal = (message: string, param: string | null = null): ResponsesServer.HttpError => ({
  status: 400,
  body: { error: { message, type: "invalid_request_error", param, code: null } }
})

/** Runs each request in turn on one client (one process), returning what each emitted and how it ended. */
const run = (server: ResponsesServer.ResponsesServer, requests: ReadonlyArray<ModelRequest>) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    const results: Array<{ readonly events: ReadonlyArray<ModelEvent>; readonly error: ModelError | undefined }> = []
    for (const request of requests) {
      const events: Array<ModelEvent> = []
      const ended = yield* Effect.either(Stream.runForEach(client.respond(request), (event) => Effect.sync(() => void events.push(event))))
      results.push({ events, error: Option.getOrUndefined(Either.getLeft(ended)) })
    }
    return results
  }).pipe(Effect.provide(ModelClient.layer({ baseURL: server.url, maxRetries: 0 }).pipe(Layer.provide(Secrets.layer(KEY)))))

const adapted = (events: ReadonlyArray<ModelEvent>) => events.flatMap((event) => (event._tag === "Adapted" ? [event.adaptation] : []))

describe("the client's adaptations", () => {
  it.scopedLive("include is remembered per model: another model on the same endpoint still asks with it; param alone is enough", () =>
    Effect.gen(function*() {
      // Refuses include for gpt-4o only, naming the param in a wording Adaptation has no pattern for.
      const server = yield* ResponsesServer.make((request) =>
        Effect.succeed(
          isObject(request.body) && request.body["model"] === "gpt-4o" && hasInclude(request.body)
            ? refusal("Unsupported parameter: 'include' is not supported for this model.", "include")
            : ResponsesServer.textResponse("fine")
        )
      )
      const results = yield* run(server, [ask("gpt-4o"), ask("gpt-4o"), ask("gpt-5.1"), ask("gpt-5.1")])
      expect(results.map((result) => result.error)).toEqual([undefined, undefined, undefined, undefined])
      expect(results.map((result) => adapted(result.events))).toEqual([["without_include"], [], [], []])
      const requests = yield* server.requests
      expect(requests.map((request) => [isObject(request.body) ? request.body["model"] : undefined, hasInclude(request.body)])).toEqual([
        ["gpt-4o", true],
        ["gpt-4o", false],
        ["gpt-4o", false],
        ["gpt-5.1", true],
        ["gpt-5.1", true]
      ])
    }))

  it.scopedLive("vLLM's bare refusal with no earlier reasoning: asked again without include (it cannot be the reasoning)", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make((request) =>
        Effect.succeed(hasInclude(request.body) ? refusal("Encrypted content is not supported.") : ResponsesServer.textResponse("fine"))
      )
      const [result] = yield* run(server, [ask("Qwen/Qwen3-8B")])
      expect(result?.error).toBeUndefined()
      expect(adapted(result?.events ?? [])).toEqual(["without_include"])
      expect((yield* server.requests).map((request) => hasInclude(request.body))).toEqual([true, false])
    }))

  it.scopedLive("vLLM's bare refusal with earlier reasoning: the reasoning first; if it still refuses, the include; each once", () =>
    Effect.gen(function*() {
      // Refuses while either is sent: both changes are needed, in that order, then it answers.
      const server = yield* ResponsesServer.make((request) =>
        Effect.succeed(
          hasInclude(request.body) || reasoningSent(request.body) ? refusal("Encrypted content is not supported.") : ResponsesServer.textResponse("fine")
        )
      )
      const [result] = yield* run(server, [ask("Qwen/Qwen3-8B", earlierTurn())])
      expect(result?.error).toBeUndefined()
      expect(adapted(result?.events ?? [])).toEqual(["without_earlier_reasoning", "without_include"])
      expect((yield* server.requests).map((request) => [reasoningSent(request.body), hasInclude(request.body)])).toEqual([
        [true, true],
        [false, true],
        [false, false]
      ])
    }))

  it.scopedLive("a refusal that stays after both changes fails the turn with the endpoint's words, after three requests", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(refusal("Encrypted content is not supported.")))
      const [result] = yield* run(server, [ask("Qwen/Qwen3-8B", earlierTurn())])
      expect(result?.error?.message).toBe("model request failed: HTTP 400: Encrypted content is not supported.")
      expect(yield* server.requests).toHaveLength(3)
    }))
})
