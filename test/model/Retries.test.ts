/**
 * Retries as shipped (two, each announced, each wait capped whatever
 * `retry-after` says), with only the cap shortened so the suite stays fast;
 * and the shipped cap itself, read from its announcement.
 */
import * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { AgentEvent } from "../../src/agent/AgentEvent.js"
import { Approver } from "../../src/approval/Approver.js"
import * as Gateway from "../../src/cli/Gateway.js"
import { ModelClient } from "../../src/model/ModelClient.js"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { agentLayer, API_KEY, scriptedModel, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"
import * as Screen from "../support/Screen.js"
import { Secrets } from "../../src/security/Secrets.js"

const CAP_MS = 40

const retried = (events: ReadonlyArray<AgentEvent>) =>
  events.flatMap((event) => (event._tag === "ModelRetrying" ? [event.message] : []))

const shipped = (url: string, home = tempDir("retries")) => ({ home, url, tools: [EchoTool.make()], shippedRetries: { waitCapMs: CAP_MS } })

/** A loopback port with nothing listening. */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const probe = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as Net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
)

describe("retries before the stream starts", () => {
  it.scopedLive("a 429 is retried twice at most, each announced on one line, each wait capped whatever retry-after says", () =>
    Effect.gen(function*() {
      const rateLimited = ResponsesServer.httpError(429, "Rate limit reached", { "retry-after": "1000" })
      const server = yield* scriptedModel([rateLimited, rateLimited, ResponsesServer.textResponse("third time lucky")])
      const { outcome, events } = yield* withAgent(shipped(server.url), turn("hello"))

      expect(outcome.status).toBe("completed")
      expect(retried(events)).toEqual([
        `HTTP 429 from the model endpoint; retrying in ${CAP_MS} ms (1/2)`,
        `HTTP 429 from the model endpoint; retrying in ${CAP_MS} ms (2/2)`
      ])
      expect(yield* server.requests).toHaveLength(3)
    }))

  it.scopedLive("after two retries the turn fails with one line naming the status", () =>
    Effect.gen(function*() {
      const home = tempDir("retries")
      const server = yield* scriptedModel([ResponsesServer.httpError(503, "Service unavailable")])
      const { outcome, events } = yield* withAgent(shipped(server.url, home), turn("hello"))

      expect(outcome.status).toBe("failed")
      expect(outcome.reason).toBe("model request failed: HTTP 503: Service unavailable (after 2 retries)")
      expect(retried(events)).toEqual([
        `HTTP 503 from the model endpoint; retrying in ${CAP_MS} ms (1/2)`,
        `HTTP 503 from the model endpoint; retrying in ${CAP_MS} ms (2/2)`
      ])
      expect(yield* server.requests).toHaveLength(3)
      expect(types(sessionLines(home))).toEqual(["user_input", "turn_end"])
    }))

  it.scopedLive("a shorter retry-after than the cap is honoured", () =>
    Effect.gen(function*() {
      const server = yield* scriptedModel([
        ResponsesServer.httpError(500, "oops", { "retry-after-ms": "5" }),
        ResponsesServer.textResponse("fine")
      ])
      const { outcome, events } = yield* withAgent(shipped(server.url), turn("hello"))
      expect(outcome.status).toBe("completed")
      expect(retried(events)).toEqual(["HTTP 500 from the model endpoint; retrying in 5 ms (1/2)"])
    }))

  it.live("a refused connection is retried twice, announced, then named", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const { outcome, events } = yield* withAgent(shipped(`http://127.0.0.1:${port}/v1`), turn("anyone?"))

      expect(outcome.status).toBe("failed")
      expect(outcome.reason).toMatch(/^model request failed: cannot connect to .*ECONNREFUSED.* \(after 2 retries\)$/)
      expect(retried(events)).toEqual([
        `cannot connect to the model endpoint (ECONNREFUSED); retrying in ${CAP_MS} ms (1/2)`,
        `cannot connect to the model endpoint (ECONNREFUSED); retrying in ${CAP_MS} ms (2/2)`
      ])
    }))

  for (const status of [400, 401, 404]) {
    it.scopedLive(`HTTP ${status} is not retried`, () =>
      Effect.gen(function*() {
        const server = yield* scriptedModel([ResponsesServer.httpError(status, "no"), ResponsesServer.textResponse("never")])
        const { outcome, events } = yield* withAgent(shipped(server.url), turn("hello"))
        expect(outcome.status).toBe("failed")
        expect(outcome.reason).toBe(`model request failed: HTTP ${status}: no`)
        expect(retried(events)).toEqual([])
        expect(yield* server.requests).toHaveLength(1)
      }))
  }

  it.scopedLive("a stream that fails after it started is not retried", () =>
    Effect.gen(function*() {
      const call = ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: "{\"text\":\"x\"}" }])
      const server = yield* scriptedModel([[...call.slice(0, 4), "drop"], ResponsesServer.textResponse("never")])
      const { outcome, events } = yield* withAgent(shipped(server.url), turn("hello"))
      expect(outcome.status).toBe("failed")
      expect(retried(events)).toEqual([])
      expect(yield* server.requests).toHaveLength(1)
    }))

  it.scopedLive("the shipped cap is 10 s: a retry-after of 1000 s is announced as a 10 s wait, and Ctrl+C ends the wait", () =>
    Effect.gen(function*() {
      const server = yield* ResponsesServer.make(() => Effect.succeed(ResponsesServer.httpError(429, "slow down", { "retry-after": "1000" })))
      const announced = yield* Deferred.make<string>()
      const fiber = yield* Effect.gen(function*() {
        const client = yield* ModelClient
        yield* Stream.runForEach(client.respond({ model: "m", instructions: "", input: [], tools: [] }), (event) =>
          event._tag === "Retrying" ? Deferred.succeed(announced, event.message) : Effect.void)
      }).pipe(
        // The shipped configuration: no retry setting at all.
        Effect.provide(ModelClient.layer({ baseURL: server.url }).pipe(Layer.provide(Secrets.layer(API_KEY)))),
        Effect.fork
      )
      expect(yield* Deferred.await(announced)).toBe("HTTP 429 from the model endpoint; retrying in 10 s (1/2)")
      yield* Effect.timeoutFail(Fiber.interrupt(fiber), { duration: "2 seconds", onTimeout: () => "the wait ignored the interruption" })
      expect(yield* server.requests).toHaveLength(1)
    }))

  it.scopedLive("the Gateway shows each retry as one line while the turn goes on", () =>
    Effect.gen(function*() {
      const server = yield* scriptedModel([
        ResponsesServer.httpError(429, "Rate limit reached", { "retry-after": "3" }),
        ResponsesServer.textResponse("made it")
      ])
      const screen = Screen.make(["hello"], { interactive: true, apiKey: API_KEY })
      const layer = agentLayer({ ...shipped(server.url), approver: Approver.layer }).pipe(Layer.provideMerge(screen.layer))
      yield* Effect.scoped(Effect.provide(Gateway.run({ banner: "BANNER" }), layer))
      expect(screen.screen()).toContain(
        `You> \nHTTP 429 from the model endpoint; retrying in ${CAP_MS} ms (1/2)\nAssistant> made it\n`
      )
    }))
})
