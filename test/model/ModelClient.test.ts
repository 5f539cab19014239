import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ModelClient, type ModelClientConfig, type ModelError, type ModelEvent, type ModelRequest } from "../../src/model/ModelClient.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import type { ToolDefinition } from "../../src/tools/Tool.js"
import { Secrets } from "../../src/security/Secrets.js"

const KEY = "sk-test-0123456789abcdef"

const bash: ToolDefinition = {
  type: "function",
  name: "bash",
  description: "Run a bash command.",
  parameters: {
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
    additionalProperties: false
  },
  strict: true
}

const request: ModelRequest = {
  model: "gpt-test",
  instructions: "Be brief.",
  input: [{ role: "user", content: "Which Go version is installed?" }],
  tools: [bash]
}

/** A server that answers every request with the same reply. */
const serve = (reply: ResponsesServer.Reply) => ResponsesServer.make(() => Effect.succeed(reply))

const respond = (url: string, config: Partial<ModelClientConfig> = {}) =>
  Effect.gen(function* () {
    const client = yield* ModelClient
    return client.respond(request)
  }).pipe(Effect.provide(ModelClient.layer({ baseURL: url, maxRetries: 0, ...config }).pipe(Layer.provide(Secrets.layer(KEY)))))

/** Runs the stream to its end, keeping what it emitted and how it ended. */
const collect = (stream: Stream.Stream<ModelEvent, ModelError>) =>
  Effect.gen(function* () {
    const events: Array<ModelEvent> = []
    const result = yield* stream.pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.either
    )
    return { events, error: Option.getOrUndefined(Either.getLeft(result)) }
  })

const text = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")

const completedOutput = (steps: ReadonlyArray<ResponsesServer.Step>): unknown => {
  const last = steps.at(-1)
  return typeof last === "object" && "type" in last && last.type === "response.completed"
    ? (last["response"] as { output: unknown }).output
    : undefined
}

/** Asserts a one-line user message without the key. */
const expectCleanMessage = (error: ModelError | undefined) => {
  expect(error?.message).not.toContain(KEY)
  expect(error?.message).not.toMatch(/\n/)
}

const created = { type: "response.created", response: { id: "resp_x", status: "in_progress", output: [] } }

describe("ModelClient", () => {
  it.scopedLive("sends one streamed, stateless request with the key and the tools", () =>
    Effect.gen(function* () {
      const server = yield* serve(ResponsesServer.textResponse("Go 1.27 is installed."))
      const { events, error } = yield* collect(yield* respond(server.url))

      expect(error).toBeUndefined()
      expect(text(events)).toBe("Go 1.27 is installed.")
      expect(events.at(-1)?._tag).toBe("Completed")
      const [logged] = yield* server.requests
      expect(logged?.body).toEqual({
        model: "gpt-test",
        instructions: "Be brief.",
        input: request.input,
        tools: [bash],
        store: false,
        include: ["reasoning.encrypted_content"],
        parallel_tool_calls: false,
        stream: true
      })
      expect(logged?.headers.authorization).toBe(`Bearer ${KEY}`)
    }))

  it.scopedLive("emits text deltas before the response is completed", () =>
    Effect.gen(function* () {
      const latch = yield* Deferred.make<void>()
      const steps = ResponsesServer.textResponse("one two three")
      // The server cannot send response.completed until the test opens the latch.
      steps.splice(steps.length - 1, 0, { wait: Deferred.await(latch) })
      const server = yield* serve(steps)
      const firstDelta = yield* Deferred.make<string>()
      const stream = (yield* respond(server.url)).pipe(
        Stream.tap((event) => (event._tag === "TextDelta" ? Deferred.succeed(firstDelta, event.text) : Effect.void))
      )
      const fiber = yield* Effect.fork(collect(stream))

      expect(yield* Deferred.await(firstDelta)).toBe("one ")
      yield* Deferred.succeed(latch, undefined)
      const { events, error } = yield* Fiber.join(fiber)
      expect(error).toBeUndefined()
      expect(events.map((event) => event._tag)).toEqual(["TextDelta", "TextDelta", "TextDelta", "Completed"])
    }))

  it.scopedLive("keeps the completed output items verbatim", () =>
    Effect.gen(function* () {
      const steps = ResponsesServer.toolCallResponse([{ call_id: "call_1", name: "bash", arguments: '{"command":"go version"}' }], {
        reasoning: { encrypted_content: "gAAAAopaque==" },
        message: { text: "Checking.", phase: "commentary", extra: { future_field: { nested: [1, "x", null] } } }
      })
      const server = yield* serve(steps)
      const { events, error } = yield* collect(yield* respond(server.url))

      expect(error).toBeUndefined()
      const completed = events.at(-1)
      expect(completed?._tag).toBe("Completed")
      const output = completed?._tag === "Completed" ? completed.response.output : []
      // Same fields, same values, same order.
      expect(JSON.stringify(output)).toBe(JSON.stringify(completedOutput(steps)))
      expect(output.map((item) => item["type"])).toEqual(["reasoning", "message", "function_call"])
      expect(output[0]?.["encrypted_content"]).toBe("gAAAAopaque==")
      expect(output[1]?.["phase"]).toBe("commentary")
      expect(output[1]?.["future_field"]).toEqual({ nested: [1, "x", null] })
    }))

  it.scopedLive("fails when the stream ends without response.completed", () =>
    Effect.gen(function* () {
      const server = yield* serve(ResponsesServer.textResponse("cut short").slice(0, -1))
      const { events, error } = yield* collect(yield* respond(server.url))

      expect(text(events)).toBe("cut short")
      expect(events.some((event) => event._tag === "Completed")).toBe(false)
      expect(error?.reason).toBe("incomplete")
      expect(error?.message).toBe("model stream ended before response.completed")
    }))

  it.scopedLive("fails when the connection drops mid-stream", () =>
    Effect.gen(function* () {
      const steps = ResponsesServer.toolCallResponse([{ call_id: "call_1", name: "bash", arguments: '{"command":"ls"}' }])
      const server = yield* serve([...steps.slice(0, 4), "drop"])
      const { events, error } = yield* collect(yield* respond(server.url))

      expect(events.some((event) => event._tag === "Completed")).toBe(false)
      expect(error?.reason).toBe("dropped")
      expect(error?.message).toMatch(/^model stream dropped before response.completed/)
    }))

  it.scopedLive("fails on an error event", () =>
    Effect.gen(function* () {
      const server = yield* serve([created, { type: "error", code: "server_error", message: "The server had an error", param: null }])
      const { error } = yield* collect(yield* respond(server.url))

      expect(error?.reason).toBe("failed")
      expect(error?.message).toBe("model stream error: The server had an error")
    }))

  it.scopedLive("fails on a data object carrying an error field", () =>
    Effect.gen(function* () {
      // The SDK itself throws for `data: {"error": ...}`; the client maps it.
      const server = yield* serve([created, { raw: 'data: {"error":{"message":"overloaded","type":"server_error"}}\n\n' }])
      const { error } = yield* collect(yield* respond(server.url))

      expect(error?.reason).toBe("failed")
      expect(error?.message).toBe("model stream error: overloaded")
    }))

  it.scopedLive("fails on response.failed", () =>
    Effect.gen(function* () {
      const server = yield* serve([
        created,
        { type: "response.failed", response: { id: "resp_x", status: "failed", error: { code: "server_error", message: "boom" }, output: [] } }
      ])
      const { error } = yield* collect(yield* respond(server.url))

      expect(error?.reason).toBe("failed")
      expect(error?.message).toBe("model response failed: boom")
    }))

  it.scopedLive("fails on response.incomplete", () =>
    Effect.gen(function* () {
      const steps = ResponsesServer.textResponse("partial answer").slice(0, -1)
      const server = yield* serve([
        ...steps,
        {
          type: "response.incomplete",
          response: { id: "resp_x", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [] }
        }
      ])
      const { events, error } = yield* collect(yield* respond(server.url))

      expect(events.some((event) => event._tag === "Completed")).toBe(false)
      expect(error?.reason).toBe("incomplete")
      expect(error?.message).toBe("model response incomplete: max_output_tokens")
    }))

  for (const status of [401, 429, 500]) {
    it.scopedLive(`fails on HTTP ${status} with one line that hides the key`, () =>
      Effect.gen(function* () {
        const server = yield* serve(ResponsesServer.httpError(status, `Incorrect API key provided: ${KEY}.\nSee the docs.`))
        const { events, error } = yield* collect(yield* respond(server.url))

        expect(events).toEqual([])
        expect(error?.reason).toBe("http")
        expect(error?.status).toBe(status)
        expect(error?.message).toBe(`model request failed: HTTP ${status}: Incorrect API key provided: [redacted]. See the docs.`)
        expectCleanMessage(error)
        expect(yield* server.requests).toHaveLength(1)
      }))
  }

  it.scopedLive("retries a 500 before the stream starts when retries are allowed", () =>
    Effect.gen(function* () {
      let calls = 0
      const server = yield* ResponsesServer.make(() =>
        Effect.sync(() =>
          ++calls === 1
            ? ResponsesServer.httpError(500, "try again", { "retry-after-ms": "0" })
            : ResponsesServer.textResponse("second time")
        )
      )
      const { events, error } = yield* collect(yield* respond(server.url, { maxRetries: 1 }))

      expect(error).toBeUndefined()
      expect(text(events)).toBe("second time")
      expect(yield* server.requests).toHaveLength(2)
    }))

  it.live("fails when the connection is refused", () =>
    Effect.gen(function* () {
      // A port that was just free: the server is closed with its scope.
      const url = yield* Effect.scoped(Effect.map(serve([]), (server) => server.url))
      const { error } = yield* collect(yield* respond(url))

      expect(error?.reason).toBe("connection")
      expect(error?.message).toContain("ECONNREFUSED")
      expectCleanMessage(error)
    }))

  it.scopedLive("fails on malformed JSON data", () =>
    Effect.gen(function* () {
      const server = yield* serve([created, { raw: "event: response.output_text.delta\ndata: {not json\n\n" }])
      const { error } = yield* collect(yield* respond(server.url))

      expect(error?.reason).toBe("protocol")
      expect(error?.message).toMatch(/^model stream sent malformed data: /)
      expectCleanMessage(error)
    }))

  it.scopedLive("fails with a timeout when the stream stalls, and closes the connection", () =>
    Effect.gen(function* () {
      const server = yield* serve([...ResponsesServer.textResponse("waiting for").slice(0, 5), "stall"])
      const { events, error } = yield* collect(yield* respond(server.url, { idleTimeoutMs: 200 }))

      expect(text(events)).toBe("waiting ")
      expect(error?.reason).toBe("timeout")
      expect(error?.message).toBe("model stream timed out: no event for 200ms")
      const [logged] = yield* server.requests
      yield* Effect.timeoutFail(logged!.closed, { duration: "2 seconds", onTimeout: () => "socket still open" })
    }))

  it.scopedLive("interrupting the consumer closes the HTTP stream at once", () =>
    Effect.gen(function* () {
      const server = yield* serve([...ResponsesServer.textResponse("never finished").slice(0, 5), "stall"])
      const firstDelta = yield* Deferred.make<void>()
      const stream = (yield* respond(server.url)).pipe(
        Stream.tap((event) => (event._tag === "TextDelta" ? Deferred.succeed(firstDelta, undefined) : Effect.void))
      )
      const fiber = yield* Effect.fork(Stream.runDrain(stream))
      yield* Deferred.await(firstDelta)

      yield* Effect.timeoutFail(Fiber.interrupt(fiber), { duration: "2 seconds", onTimeout: () => "interrupt hung" })
      const [logged] = yield* server.requests
      // The script stalls forever, so only the client's abort can close the response.
      yield* Effect.timeoutFail(logged!.closed, { duration: "2 seconds", onTimeout: () => "socket still open" })
    }))
})
