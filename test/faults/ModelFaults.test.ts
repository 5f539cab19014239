/**
 * Model faults end the turn `failed` with one clear line, execute nothing, and
 * leave the chat working: the next turn succeeds and does not see the failure.
 */
import * as Net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as ResponsesServer from "../../src/testing/ResponsesServer.js"
import * as EchoTool from "../support/EchoTool.js"
import { API_KEY, inputOf, scriptedModel, sessionLines, tempDir, turn, types, withAgent } from "../support/Harness.js"

const call = ResponsesServer.toolCallResponse([{ call_id: "c1", name: "echo", arguments: "{\"text\":\"x\"}" }])
/** Cut the stream in the middle of the function call's argument deltas. */
const midItem = call.findIndex((step) => typeof step === "object" && "type" in step && step.type === "response.function_call_arguments.delta")

const faults: ReadonlyArray<readonly [string, ResponsesServer.Reply, RegExp]> = [
  ["HTTP 401", ResponsesServer.httpError(401, `Incorrect API key provided: ${API_KEY}`), /^model request failed: HTTP 401: Incorrect API key provided: \[redacted\]/],
  ["HTTP 429", ResponsesServer.httpError(429, "Rate limit reached", { "retry-after-ms": "0" }), /HTTP 429: Rate limit reached/],
  ["HTTP 500", ResponsesServer.httpError(500, "The server had an error"), /HTTP 500/],
  ["a stream that drops mid-item", [...call.slice(0, midItem + 1), "drop"], /dropped before response\.completed/],
  ["malformed JSON", [...call.slice(0, 3), { raw: "event: response.output_item.added\ndata: {\"type\":\"response.out\n\n" }], /malformed/],
  ["an error event", [...call.slice(0, 3), { type: "error", code: "server_error", message: "overloaded", param: null }], /overloaded/],
  ["a stream that stalls", [...call.slice(0, 3), "stall"], /timed out/]
]

describe("model faults", () => {
  for (const [name, reply, message] of faults) {
    it.scopedLive(`${name}: the turn fails with one clear line, nothing runs, the next turn works`, () =>
      Effect.gen(function*() {
        const home = tempDir("faults")
        const ran: Array<string> = []
        const server = yield* scriptedModel([reply, ResponsesServer.textResponse("recovered")])
        // Only the stall waits for the idle timeout; the others keep the harness's 5 s, so a loaded
        // machine's slow first response is never read as a stall.
        const idleTimeoutMs = name === "a stream that stalls" ? 2_000 : undefined
        const setup = { home, url: server.url, tools: [EchoTool.make((t) => void ran.push(t))], ...(idleTimeoutMs === undefined ? {} : { idleTimeoutMs }) }
        const failed = yield* withAgent(setup, turn("first"))
        expect(failed.outcome.status).toBe("failed")
        expect(failed.outcome.reason).toMatch(message)
        expect(failed.outcome.reason).not.toContain("\n")
        expect(failed.outcome.reason).not.toContain(API_KEY)
        expect(ran).toEqual([])
        expect(types(sessionLines(home))).toEqual(["user_input", "turn_end"])

        const next = yield* withAgent(setup, turn("second"))
        expect(next.outcome.status).toBe("completed")
        expect(inputOf((yield* server.requests).at(-1)!)).toEqual([
          { type: "message", role: "user", content: [{ type: "input_text", text: "second" }] }
        ])
      }))
  }

  it.scopedLive("connection refused: the turn fails, and the chat works once the endpoint is back", () =>
    Effect.gen(function*() {
      const closedPort = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = Net.createServer().listen(0, "127.0.0.1", () => {
            const { port } = probe.address() as Net.AddressInfo
            probe.close(() => resolve(port))
          })
        })
      )
      const home = tempDir("faults")
      const failed = yield* withAgent({ home, url: `http://127.0.0.1:${closedPort}/v1`, tools: [] }, turn("anyone there?"))
      expect(failed.outcome.status).toBe("failed")
      expect(failed.outcome.reason).toMatch(/cannot connect.*ECONNREFUSED/)
      const server = yield* scriptedModel([ResponsesServer.textResponse("here now")])
      const next = yield* withAgent({ home, url: server.url, tools: [] }, turn("and now?"))
      expect(next.outcome.status).toBe("completed")
    }))
})
